/**
 * Runs through the statuses and gates of contract W3 under the executor, and the cancel route of
 * contract W6: failed steps parking the run, the credit budget gate, the deadline, the
 * organization's concurrency cap (released in start order), cancel at once, at the next step
 * boundary, and forced after forceAvailableAt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type TestApp } from '../../../helpers/app.js';
import { startWorkflowsApp, WF_BASE } from '../../../helpers/workflows.js';

const FORCE_AFTER_MS = 400;

describe('workflow run lifecycle', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startWorkflowsApp({
      WORKFLOW_FORCE_CANCEL_AFTER_MS: String(FORCE_AFTER_MS),
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const start = (body: unknown, base = WF_BASE, token = 'lk_wf_all') => app.request('POST', `${base}/runs`, { token, body });
  const detail = async (runId: string, base = WF_BASE, token = 'lk_wf_all') => (await app.request('GET', `${base}/runs/${runId}`, { token })).body;
  const cancel = (runId: string, body?: unknown, base = WF_BASE, token = 'lk_wf_all') =>
    app.request('POST', `${base}/runs/${runId}/cancel`, { token, ...(body !== undefined ? { body } : {}) });
  async function until(runId: string, ok: (run: any) => boolean, base = WF_BASE, token = 'lk_wf_all'): Promise<any> {
    for (let i = 0; i < 300; i++) {
      const run = await detail(runId, base, token);
      if (ok(run)) return run;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`run ${runId} never reached the awaited state`);
  }

  it('parks a step failed past its automatic retries: suspended with an exception gate', async () => {
    const res = await start({ workflowName: 'flaky' });
    const run = await until(res.body.runId, (r) => r.status === 'suspended');
    expect(run.gate).toEqual({ kind: 'exception', since: expect.any(Number), stepId: 'try', attempt: 2, code: 'UPSTREAM_DOWN' });
    expect(run.steps[0]).toMatchObject({ stepId: 'try', status: 'suspended', attempt: 2, error: { code: 'UPSTREAM_DOWN', message: 'step try failed' } });
    expect(run.steps[1]).toMatchObject({ stepId: 'end', status: 'pending', attempt: 0 });
    expect(run.counts).toMatchObject({ total: 2, suspended: 1, pending: 1, completed: 0 });
    expect(run.suspensions).toEqual([{ stepId: 'try', attempt: 2, code: 'UPSTREAM_DOWN', since: run.gate.since }]);
    expect(run.phase).toBe('parked');
    // Nothing runs on a suspended run: a cancel ends it at once.
    const c = await cancel(run.runId);
    expect(c.status).toBe(200);
    expect(c.body).toEqual({
      cancelRequested: true, state: 'terminal', status: 'cancelled', transitioned: true, requestedAt: expect.any(Number),
      forceAvailableAt: c.body.requestedAt + FORCE_AFTER_MS, nextAction: 'none',
    });
    expect((await detail(run.runId)).status).toBe('cancelled');
  });

  it('gates a costly step whose reserve passes the credit cap', async () => {
    const graph = { steps: [{ id: 'first', kind: 'costly', credits: 30 }, { id: 'second', kind: 'costly', credits: 30 }, { id: 'end', kind: 'noop' }] };
    const res = await start({ graph, budget: { maxCredits: 50 } });
    const run = await until(res.body.runId, (r) => r.status === 'gated');
    expect(run.gate).toEqual({ kind: 'budget', since: expect.any(Number), stepId: 'second', dimension: 'credits', spent: 30, cap: 50 });
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'pending', 'pending']);
    expect(run.budget).toMatchObject({ maxCredits: 50, spent: { credits: 30, steps: 1 }, remaining: 20 });
    expect(run.usage).toEqual({ credits: 30, steps: 1 });
  });

  it('times a run out past budget.maxDurationSeconds, even mid-step', async () => {
    const res = await start({ graph: { steps: [{ id: 'long', kind: 'sleep', ms: 5000 }, { id: 'never', kind: 'noop' }] }, budget: { maxDurationSeconds: 1 } });
    const run = await until(res.body.runId, (r) => r.status === 'timed_out');
    expect(Date.now() - run.createdAt).toBeLessThan(4000);
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'pending']);
    expect(run.durationMs).toBeGreaterThanOrEqual(1000);
  });

  it('answers a cancel of a terminal run with state terminal and nextAction none', async () => {
    const res = await start({ workflowName: 'nightly-report', input: { day: 'd' } });
    await until(res.body.runId, (r) => r.status === 'completed');
    const c = await cancel(res.body.runId, { mode: 'force' });
    expect(c.body).toEqual({ cancelRequested: false, state: 'terminal', status: 'completed', transitioned: false, nextAction: 'none' });
  });

  it('cancels a running run at the next step boundary: the step in progress finishes, the next never starts', async () => {
    const res = await start({ workflowName: 'slow' });
    await until(res.body.runId, (r) => r.status === 'running');
    const c = await cancel(res.body.runId, { reason: 'not needed' });
    expect(c.body).toEqual({
      cancelRequested: true, state: 'cancel_requested', status: 'running', transitioned: false, requestedAt: expect.any(Number),
      forceAvailableAt: c.body.requestedAt + FORCE_AFTER_MS, nextAction: 'cancel_again',
    });
    // A force before forceAvailableAt changes nothing.
    const early = await cancel(res.body.runId, { mode: 'force' });
    expect(early.body).toMatchObject({ transitioned: false, nextAction: 'cancel_again', status: 'running', requestedAt: c.body.requestedAt });
    const run = await until(res.body.runId, (r) => r.status === 'cancelled');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'pending']);
    expect(run.cancel).toEqual({ requestedAt: c.body.requestedAt, forceAvailableAt: c.body.forceAvailableAt, reason: 'not needed' });
    expect(run.hasOutput).toBe(false);
  });

  it('abandons a running run on a force (or a second request) after forceAvailableAt', async () => {
    const res = await start({ graph: { steps: [{ id: 'nap', kind: 'sleep', ms: 2500 }, { id: 'out', kind: 'output', value: 1 }] } });
    await until(res.body.runId, (r) => r.status === 'running');
    const first = await cancel(res.body.runId);
    expect(first.body.nextAction).toBe('cancel_again');
    await new Promise((r) => setTimeout(r, FORCE_AFTER_MS + 50));
    const forced = await cancel(res.body.runId, { mode: 'request' });
    expect(forced.body).toEqual({
      cancelRequested: true, state: 'terminal', status: 'abandoned', transitioned: true, forced: true,
      requestedAt: first.body.requestedAt, forceAvailableAt: first.body.forceAvailableAt, nextAction: 'none',
    });
    // The executor interrupted mid-step writes nothing over it.
    await new Promise((r) => setTimeout(r, 2600));
    const run = await detail(res.body.runId);
    expect(run.status).toBe('abandoned');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'pending']);
  });

  it('gates starts over the organization\'s maxConcurrentRuns and releases them in start order', async () => {
    const base = '/workflows/agt_globex';
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await start({ workflowName: 'slow' }, base, 'lk_wf_globex');
      expect(res.status).toBe(202);
      ids.push(res.body.runId);
    }
    const second = await detail(ids[1]!, base, 'lk_wf_globex');
    expect(second.status).toBe('gated');
    expect(second.gate).toEqual({ kind: 'quota', code: 'concurrency_cap', since: expect.any(Number) });
    expect(second.startedAt).toBeNull();
    // A gated run cancelled goes at once; the others keep their order.
    const c = await app.request('POST', `${base}/runs/${ids[2]}/cancel`, { token: 'lk_wf_globex' });
    expect(c.body).toMatchObject({ status: 'cancelled', transitioned: true });
    const runs = [];
    for (const id of [ids[0]!, ids[1]!, ids[3]!]) runs.push(await until(id, (r) => r.status === 'completed', base, 'lk_wf_globex'));
    for (let i = 1; i < runs.length; i++) expect(runs[i].startedAt).toBeGreaterThanOrEqual(runs[i - 1].completedAt);
    expect(runs[2].gate).toBeNull();
  }, 20_000);

  it('admits exactly as many of simultaneous starts as the cap has room for: one queued, the rest gated, all completed one at a time', async () => {
    const base = '/workflows/agt_globex';
    // Globex's cap is one run: wait until no run of an earlier test holds the slot.
    await waitFor(async () => {
      const [{ n }] = (await app.store.sql.query<{ n: number }>("select count(*)::int as n from workflow_runs where org_id = 'org_globex' and status in ('queued', 'running', 'gated')")) as [{ n: number }];
      return n === 0;
    }, { what: 'no Globex run active' });
    const answers = await Promise.all(Array.from({ length: 6 }, () => start({ workflowName: 'slow' }, base, 'lk_wf_globex')));
    for (const a of answers) expect(a.status).toBe(202);
    expect(answers.map((a) => a.body.status).sort()).toEqual(['gated', 'gated', 'gated', 'gated', 'gated', 'queued']);
    const runs = [];
    for (const a of answers) runs.push(await until(a.body.runId, (r) => r.status === 'completed', base, 'lk_wf_globex'));
    runs.sort((x, y) => x.startedAt - y.startedAt);
    for (let i = 1; i < runs.length; i++) expect(runs[i].startedAt).toBeGreaterThanOrEqual(runs[i - 1].completedAt);
  }, 30_000);

  it('refuses a cancel without workflows:execute, of an unknown run, or with a reason over 2,000 characters', async () => {
    const res = await start({ workflowName: 'nightly-report', input: { day: 'd' } });
    const denied = await cancel(res.body.runId, {}, WF_BASE, 'lk_wf_read');
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      statusCode: 403, code: 'INSUFFICIENT_SCOPE', message: 'This credential lacks the workflows:execute scope.',
      resourceType: 'agent', resourceId: 'agt_support', requiredScope: 'workflows:execute',
    });
    const unknown = await cancel('wfr_missing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ statusCode: 404, code: 'RUN_NOT_FOUND', message: 'No run wfr_missing for agent agt_support', runId: 'wfr_missing' });
    const long = await cancel(res.body.runId, { reason: 'r'.repeat(2001) });
    expect(long.status).toBe(400);
    expect(long.body.details).toEqual([{ path: 'reason', constraint: 'maxLength', message: 'reason must be at most 2000 characters' }]);
    const mode = await cancel(res.body.runId, { mode: 'now' });
    expect(mode.body.details).toEqual([{ path: 'mode', constraint: 'enum', message: 'mode must be request or force' }]);
  });
});
