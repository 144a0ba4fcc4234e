/**
 * The executor's guarantees (contract W2, W3; docs/api-workflows.md): a run whose executor dies
 * mid-step is taken over after its lease and the step runs again, with every attempt recorded; a
 * stopped executor hands its runs back at once; two executors share the runs with each step
 * completed exactly once. The API runs no executor here: the test drives its own, on the API's store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until, type TestApp } from '../../../helpers/app.js';
import { startWorkflowsApp, WF_BASE } from '../../../helpers/workflows.js';
import { createExecutor, type Executor } from '../../../../src/modules/workflows/executor.js';
import { createLogger } from '../../../../src/telemetry/logger.js';

interface AttemptRow { run_id: string; idx: number; attempt: number; executor: string; outcome: string | null; started_at: Date; ended_at: Date | null }

describe('workflow executor', () => {
  let app: TestApp;
  const executors: Executor[] = [];
  beforeAll(async () => {
    app = await startWorkflowsApp({
      WORKFLOW_EXECUTOR: 'false',
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    for (const e of executors) await e.stop();
    await app?.stop();
  });

  const logger = createLogger('silent');
  const executor = (leaseMs: number, pollMs = 50): Executor => {
    const e = createExecutor({ store: app.store, logger, leaseMs, pollMs, slots: 4 });
    executors.push(e);
    void e.start();
    return e;
  };
  const start = async (body: unknown): Promise<string> => {
    const res = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body });
    expect(res.status).toBe(202);
    return res.body.runId as string;
  };
  const detail = async (runId: string) => (await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'lk_wf_all' })).body;
  const attempts = (runIds: string[]) =>
    app.store.sql.query<AttemptRow>('select * from workflow_step_attempts where run_id = any($1::text[]) order by run_id, idx, attempt', [runIds]);
  const running = (runId: string) => until('the first step to run', async () => ((await detail(runId)).steps?.[0]?.status === 'running' ? true : undefined));

  it('takes over a run whose executor died mid-step after its lease, and runs the step again', async () => {
    const runId = await start({ workflowName: 'slow' });
    const a = executor(500);
    await running(runId);
    await a.die();
    const diedAt = Date.now();
    const b = executor(500);
    const run = await until('the run to complete', async () => {
      const r = await detail(runId);
      return r.status === 'completed' ? r : undefined;
    });
    // Not before the dead executor's lease ran out; the sleep step then ran in full again.
    expect(run.completedAt - diedAt).toBeGreaterThanOrEqual(1500);
    expect(run.steps).toEqual([
      expect.objectContaining({ stepId: 'nap', status: 'completed', attempt: 2 }),
      expect.objectContaining({ stepId: 'done', status: 'completed', attempt: 1 }),
    ]);
    const rows = await attempts([runId]);
    expect(rows.map((r) => [r.idx, r.attempt, r.executor, r.outcome])).toEqual([
      [0, 1, a.id, 'lost'],
      [0, 2, b.id, 'completed'],
      [1, 1, b.id, 'completed'],
    ]);
    // The lost attempt is closed only when the run is taken over, after the lease.
    expect(rows[1]!.started_at.getTime()).toBeGreaterThanOrEqual(rows[0]!.started_at.getTime() + 500);
    expect((await detail(runId)).status).toBe('completed');
    await b.stop();
  }, 30_000);

  it('hands its runs back at once when stopped: another executor goes on without waiting for the lease', async () => {
    const runId = await start({ workflowName: 'slow' });
    const a = executor(60_000);
    await running(runId);
    await a.stop();
    const b = executor(60_000);
    const run = await until('the run to complete', async () => {
      const r = await detail(runId);
      return r.status === 'completed' ? r : undefined;
    }, 10_000);
    expect(run.steps[0]).toMatchObject({ stepId: 'nap', status: 'completed', attempt: 2 });
    const rows = await attempts([runId]);
    expect(rows.map((r) => [r.idx, r.attempt, r.executor, r.outcome])).toEqual([
      [0, 1, a.id, 'lost'],
      [0, 2, b.id, 'completed'],
      [1, 1, b.id, 'completed'],
    ]);
    await b.stop();
  }, 30_000);

  it('is woken by a start through the store\'s notification, not at its next poll', async () => {
    // An executor of another process, as far as the API is concerned: it polls once a minute.
    const e = executor(2000, 60_000);
    await e.start(); // listening, and idle after its first pass
    // Past its first pass and waiting out its poll: only the notification can wake it now.
    await new Promise((res) => setTimeout(res, 200));
    const began = Date.now();
    const runId = await start({ workflowName: 'nightly-report', input: { day: 'mon' } });
    await until('the run to complete', async () => ((await detail(runId)).status === 'completed' ? true : undefined), 15_000);
    expect(Date.now() - began).toBeLessThan(15_000);
    await e.stop();
  }, 30_000);

  it('shares runs between two executors, each step completed exactly once', async () => {
    const graph = { steps: [{ id: 'one', kind: 'noop' }, { id: 'two', kind: 'sleep', ms: 40 }, { id: 'three', kind: 'output', value: 3 }] };
    const ids: string[] = [];
    // Queued before either executor runs: more runs than one executor's slots, so both take some
    // (an executor woken by each start would otherwise keep up with one start at a time alone).
    for (let i = 0; i < 30; i++) ids.push(await start({ graph }));
    const a = executor(2000);
    const b = executor(2000);
    await until('every run to complete', async () => {
      const [{ n }] = (await app.store.sql.query<{ n: number }>("select count(*)::int as n from workflow_runs where id = any($1::text[]) and status = 'completed'", [ids])) as [{ n: number }];
      return n === ids.length ? true : undefined;
    }, 30_000);
    const rows = await attempts(ids);
    expect(rows).toHaveLength(ids.length * 3);
    for (const r of rows) expect([r.attempt, r.outcome]).toEqual([1, 'completed']);
    expect(new Set(rows.map((r) => r.executor))).toEqual(new Set([a.id, b.id]));
    // One executor per run at a time: a run's attempts never overlap.
    for (const id of ids) {
      const own = rows.filter((r) => r.run_id === id);
      for (let i = 1; i < own.length; i++) expect(own[i]!.started_at.getTime()).toBeGreaterThanOrEqual(own[i - 1]!.ended_at!.getTime());
    }
    for (const id of ids.slice(0, 3)) expect((await app.request('GET', `${WF_BASE}/runs/${id}?fields=full`, { token: 'lk_wf_all' })).body.output).toBe(3);
    await a.stop();
    await b.stop();
  }, 60_000);
});
