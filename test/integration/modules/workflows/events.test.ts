/**
 * A run's event log (GET /workflows/:agentId/runs/:runId/events): the events of every move in order
 * (a completed run, a run parked and retried, a budget park and raise, a cancel request, a run gated
 * on the concurrency cap), paged by `after` and `limit`, `eventSeq` of the summary at the latest
 * event, never another agent's, and gone with an erased run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type TestApp } from '../../../helpers/app.js';
import { startWorkflowsApp, WF_BASE } from '../../../helpers/workflows.js';
import { createExecutor, type Executor } from '../../../../src/modules/workflows/executor.js';
import { createLogger } from '../../../../src/telemetry/logger.js';

describe('workflow run events', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startWorkflowsApp({
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const start = async (body: unknown, base = WF_BASE, token = 'sess_ann') => {
    const res = await app.request('POST', `${base}/runs`, { token, body });
    expect(res.status).toBe(202);
    return res.body.runId as string;
  };
  const detail = async (runId: string, base = WF_BASE, token = 'sess_ann') => (await app.request('GET', `${base}/runs/${runId}`, { token })).body;
  const until = (runId: string, ok: (r: any) => boolean, base = WF_BASE, token = 'sess_ann') =>
    waitFor(async () => {
      const r = await detail(runId, base, token);
      return ok(r) ? r : undefined;
    }, { what: `run ${runId} in the awaited state` });
  const events = (runId: string, query = '', base = WF_BASE, token = 'sess_ann') => app.request('GET', `${base}/runs/${runId}/events${query}`, { token });
  /** The log without its times: `[seq, kind, {stepId?, attempt?, status?, code?}]`. */
  const log = async (runId: string, base = WF_BASE, token = 'sess_ann') => {
    const res = await events(runId, '?limit=100', base, token);
    expect(res.status).toBe(200);
    return (res.body.items as any[]).map(({ seq, kind, at, ...rest }) => {
      expect(at).toEqual(expect.any(Number));
      return [seq, kind, rest];
    });
  };

  it('logs a completed run: created, started, each step started and completed, completed; eventSeq is the last seq', async () => {
    const before = Date.now();
    const runId = await start({ workflowName: 'nightly-report', input: { day: 'secret-day' } });
    const run = await until(runId, (r) => r.status === 'completed');
    expect(await log(runId)).toEqual([
      [1, 'created', { status: 'queued' }],
      [2, 'started', { status: 'running' }],
      [3, 'step_started', { stepId: 'fetch', attempt: 1, status: 'running' }],
      [4, 'step_completed', { stepId: 'fetch', attempt: 1, status: 'completed' }],
      [5, 'step_started', { stepId: 'out', attempt: 1, status: 'running' }],
      [6, 'step_completed', { stepId: 'out', attempt: 1, status: 'completed' }],
      [7, 'completed', { status: 'completed' }],
    ]);
    expect(run.eventSeq).toBe(7);
    const res = await events(runId);
    const ats = (res.body.items as any[]).map((e) => e.at as number);
    expect(ats[0]).toBeGreaterThanOrEqual(before - 1000);
    expect([...ats].sort((a, b) => a - b)).toEqual(ats);
    expect(ats.at(-1)).toBe(run.completedAt);
    // No payload in any event: neither the input nor the output's value.
    expect(JSON.stringify(res.body)).not.toMatch(/secret-day|v2/);
    expect(res.body.nextAfter).toBe(7);
  });

  it('logs a run whose step failed, retried itself, parked the run, and was retried by hand', async () => {
    const runId = await start({ workflowName: 'flaky' });
    await until(runId, (r) => r.status === 'suspended');
    expect((await app.request('POST', `${WF_BASE}/runs/${runId}/steps/try/retry`, { token: 'sess_ann', body: {} })).status).toBe(200);
    const run = await until(runId, (r) => r.status === 'completed');
    const entries = await log(runId);
    expect(entries).toEqual([
      [1, 'created', { status: 'queued' }],
      [2, 'started', { status: 'running' }],
      [3, 'step_started', { stepId: 'try', attempt: 1, status: 'running' }],
      [4, 'step_failed', { stepId: 'try', attempt: 1, status: 'pending', code: 'UPSTREAM_DOWN' }],
      [5, 'step_started', { stepId: 'try', attempt: 2, status: 'running' }],
      [6, 'step_failed', { stepId: 'try', attempt: 2, status: 'suspended', code: 'UPSTREAM_DOWN' }],
      [7, 'parked', { stepId: 'try', attempt: 2, status: 'suspended', code: 'UPSTREAM_DOWN' }],
      [8, 'retried', { stepId: 'try', attempt: 3, status: 'pending' }],
      [9, 'resumed', { status: 'queued' }],
      [10, 'started', { status: 'running' }],
      [11, 'step_started', { stepId: 'try', attempt: 3, status: 'running' }],
      [12, 'step_completed', { stepId: 'try', attempt: 3, status: 'completed' }],
      [13, 'step_started', { stepId: 'end', attempt: 1, status: 'running' }],
      [14, 'step_completed', { stepId: 'end', attempt: 1, status: 'completed' }],
      [15, 'completed', { status: 'completed' }],
    ]);
    expect(run.eventSeq).toBe(15);
  });

  it('logs a resolve with fail: the step resolved, then the run failed with the step\'s code', async () => {
    const runId = await start({ graph: { steps: [{ id: 'check', kind: 'fail', code: 'NEEDS_HUMAN' }] } });
    await until(runId, (r) => r.status === 'suspended');
    expect((await app.request('POST', `${WF_BASE}/runs/${runId}/steps/check/resolve`, { token: 'sess_ann', body: { outcome: 'fail' } })).status).toBe(200);
    expect((await log(runId)).slice(4)).toEqual([
      [5, 'parked', { stepId: 'check', attempt: 1, status: 'suspended', code: 'NEEDS_HUMAN' }],
      [6, 'resolved', { stepId: 'check', attempt: 1, status: 'failed' }],
      [7, 'failed', { stepId: 'check', status: 'failed', code: 'NEEDS_HUMAN' }],
    ]);
  });

  it('logs a park on the budget, a raise that does not cover the reserve, and one that resumes the run', async () => {
    const runId = await start({ graph: { steps: [{ id: 'pay', kind: 'costly', credits: 5 }] }, budget: { maxCredits: 1 } });
    await until(runId, (r) => r.status === 'gated');
    expect((await app.request('POST', `${WF_BASE}/runs/${runId}/budget`, { token: 'sess_ann', body: { maxCredits: 2 } })).body).toMatchObject({ resumed: false });
    expect((await app.request('POST', `${WF_BASE}/runs/${runId}/budget`, { token: 'sess_ann', body: { maxCredits: 10 } })).body).toMatchObject({ resumed: true });
    await until(runId, (r) => r.status === 'completed');
    expect(await log(runId)).toEqual([
      [1, 'created', { status: 'queued' }],
      [2, 'started', { status: 'running' }],
      [3, 'parked', { stepId: 'pay', status: 'gated', code: 'budget' }],
      [4, 'budget_raised', { status: 'gated' }],
      [5, 'budget_raised', { status: 'queued' }],
      [6, 'resumed', { status: 'queued' }],
      [7, 'started', { status: 'running' }],
      [8, 'step_started', { stepId: 'pay', attempt: 1, status: 'running' }],
      [9, 'step_completed', { stepId: 'pay', attempt: 1, status: 'completed' }],
      [10, 'completed', { status: 'completed' }],
    ]);
  });

  it('logs a cancel request while a step runs, then the cancel at the step boundary', async () => {
    const runId = await start({ workflowName: 'slow' });
    await until(runId, (r) => r.currentLabel === 'nap' && r.status === 'running' && r.eventSeq >= 3);
    expect((await app.request('POST', `${WF_BASE}/runs/${runId}/cancel`, { token: 'sess_ann', body: {} })).body).toMatchObject({ state: 'cancel_requested' });
    await until(runId, (r) => r.status === 'cancelled');
    expect((await log(runId)).slice(2)).toEqual([
      [3, 'step_started', { stepId: 'nap', attempt: 1, status: 'running' }],
      [4, 'cancel_requested', { status: 'running' }],
      [5, 'step_completed', { stepId: 'nap', attempt: 1, status: 'completed' }],
      [6, 'cancelled', { status: 'cancelled' }],
    ]);
  });

  it('logs a run gated on the concurrency cap and released when a slot frees', async () => {
    const base = '/workflows/agt_globex';
    // Globex runs one run at a time: the second start waits for the first.
    const first = await start({ graph: { steps: [{ id: 'nap', kind: 'sleep', ms: 1000 }] } }, base, 'lk_wf_globex');
    const second = await start({ graph: { steps: [{ id: 'a', kind: 'noop' }] } }, base, 'lk_wf_globex');
    await until(second, (r) => r.status === 'completed', base, 'lk_wf_globex');
    await until(first, (r) => r.status === 'completed', base, 'lk_wf_globex');
    expect((await log(second, base, 'lk_wf_globex')).slice(0, 3)).toEqual([
      [1, 'created', { status: 'gated', code: 'concurrency_cap' }],
      [2, 'released', { status: 'queued' }],
      [3, 'started', { status: 'running' }],
    ]);
  });

  it('pages by after and limit; nextAfter is the last seq given, or after when there is none', async () => {
    const runId = await start({ workflowName: 'nightly-report', input: { day: 'd' } });
    await until(runId, (r) => r.status === 'completed');
    const page = await events(runId, '?after=2&limit=3');
    expect(page.status).toBe(200);
    expect((page.body.items as any[]).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(page.body.nextAfter).toBe(5);
    const rest = await events(runId, `?after=${page.body.nextAfter}`);
    expect((rest.body.items as any[]).map((e) => e.seq)).toEqual([6, 7]);
    const none = await events(runId, '?after=7');
    expect(none.body).toEqual({ items: [], nextAfter: 7 });
    expect((await events(runId, '?after=0&limit=1')).body.items).toHaveLength(1);
  });

  it('refuses a malformed after or limit with VALIDATION_FAILED naming the parameter', async () => {
    const runId = await start({ workflowName: 'nightly-report', input: { day: 'd' } });
    for (const [query, path, message] of [
      ['?after=-1', 'after', 'after must be a whole number (an event seq), 0 or more'],
      ['?after=abc', 'after', 'after must be a whole number (an event seq), 0 or more'],
      ['?limit=0', 'limit', 'limit must be an integer from 1 to 100'],
      ['?limit=101', 'limit', 'limit must be an integer from 1 to 100'],
      ['?cursor=x', 'cursor', 'cursor is not a parameter of this route'],
    ] as const) {
      const res = await events(runId, query);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', details: [expect.objectContaining({ path, message })] });
    }
  });

  it('never shows another agent\'s run, and asks for workflows:read', async () => {
    const runId = await start({ workflowName: 'nightly-report', input: { day: 'd' } });
    const other = await events(runId, '', '/workflows/agt_other');
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ statusCode: 404, code: 'RUN_NOT_FOUND', message: `No run ${runId} for agent agt_other`, runId });
    expect((await events('wfr_nope')).body).toMatchObject({ statusCode: 404, code: 'RUN_NOT_FOUND' });
    expect((await events(runId, '', WF_BASE, 'lk_wf_globex')).body).toMatchObject({ statusCode: 403, code: 'RESOURCE_NOT_PROJECTED' });
    expect((await events(runId, '', WF_BASE, 'lk_wf_none')).body).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: 'workflows:read' });
    expect((await events(runId, '', WF_BASE, 'lk_wf_read')).status).toBe(200);
  });

  it('is erased with its run', async () => {
    const runId = await start({ workflowName: 'nightly-report', input: { day: 'd' } });
    await until(runId, (r) => r.status === 'completed');
    expect((await events(runId)).body.items.length).toBeGreaterThan(0);
    expect((await app.request('DELETE', `${WF_BASE}/runs/${runId}`, { token: 'sess_ann' })).status).toBe(202);
    expect((await events(runId)).body).toMatchObject({ statusCode: 404, code: 'RUN_NOT_FOUND' });
    const [left] = await app.store.sql.query<{ n: number }>('select count(*)::int as n from workflow_run_events where run_id = $1', [runId]);
    expect(left!.n).toBe(0);
  });
});

describe('workflow run events of a takeover', () => {
  // The API runs no executor here: the test drives two, on the API's store, and lets one die.
  let app: TestApp;
  const executors: Executor[] = [];
  beforeAll(async () => {
    app = await startWorkflowsApp({ WORKFLOW_EXECUTOR: 'false', WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000' });
  });
  afterAll(async () => {
    for (const e of executors) await e.stop();
    await app?.stop();
  });
  const executor = (): Executor => {
    const e = createExecutor({ store: app.store, logger: createLogger('silent'), leaseMs: 500, pollMs: 50, slots: 4 });
    executors.push(e);
    e.start();
    return e;
  };
  const detail = async (runId: string) => (await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'lk_wf_all' })).body;

  it('logs the lost attempt of a dead executor, the new claim and the step run again', async () => {
    const res = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'slow' } });
    const runId = res.body.runId as string;
    const a = executor();
    await waitFor(async () => (await detail(runId)).steps?.[0]?.status === 'running', { what: 'the first step to run' });
    await a.die();
    executor();
    await waitFor(async () => (await detail(runId)).status === 'completed', { what: 'the run to complete' });
    const events = await app.request('GET', `${WF_BASE}/runs/${runId}/events`, { token: 'lk_wf_all' });
    expect((events.body.items as any[]).map(({ seq, kind, stepId, attempt }) => [seq, kind, stepId, attempt])).toEqual([
      [1, 'created', undefined, undefined],
      [2, 'started', undefined, undefined],
      [3, 'step_started', 'nap', 1],
      [4, 'started', undefined, undefined],
      [5, 'step_lost', 'nap', 1],
      [6, 'step_started', 'nap', 2],
      [7, 'step_completed', 'nap', 2],
      [8, 'step_started', 'done', 1],
      [9, 'step_completed', 'done', 1],
      [10, 'completed', undefined, undefined],
    ]);
  });
});
