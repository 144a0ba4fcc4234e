/**
 * The organization's gates on runs (contract W8): the suspended cap (`workflowPolicies.maxSuspendedRuns`)
 * gates a start `{kind: quota, code: suspended_cap}` and rejects a batch item with `code: suspended_cap`;
 * a run queued before its organization was archived is gated `org_archived` and does not run until the
 * organization is no longer archived. The API runs no executor here: the test drives its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { until, startApp, type TestApp } from '../../../helpers/app.js';
import { WF_BASE, writeWorkflowsSeed } from '../../../helpers/workflows-seed.js';
import { createExecutor, type Executor } from '../../../../src/modules/workflows/executor.js';
import { createLogger } from '../../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../../src/seed/seed-file.js';
import { applySeed } from '../../../../src/seed/apply.js';
import { familySeeds } from '../../../../src/modules/index.js';

const GLOBEX = '/workflows/agt_globex';

describe('organization gates on workflow runs', () => {
  let app: TestApp;
  let seedPath: string;
  const executors: Executor[] = [];
  beforeAll(async () => {
    seedPath = writeWorkflowsSeed({ maxConcurrentRuns: 500, maxSuspendedRuns: 1 });
    app = await startApp({
      SEED_FILE: seedPath, WORKFLOW_EXECUTOR: 'false',
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_BATCH_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    for (const e of executors) await e.stop();
    await app?.stop();
  });

  const executor = (): Executor => {
    const e = createExecutor({ store: app.store, logger: createLogger('silent'), leaseMs: 5000, pollMs: 50, slots: 4 });
    executors.push(e);
    void e.start();
    return e;
  };
  const start = (body: unknown, base = WF_BASE, token = 'lk_wf_all') => app.request('POST', `${base}/runs`, { token, body });
  const started = async (body: unknown, base = WF_BASE, token = 'lk_wf_all'): Promise<{ runId: string; status: string }> => {
    const res = await start(body, base, token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body;
  };
  const detail = async (runId: string, base = WF_BASE, token = 'lk_wf_all') => {
    const res = await app.request('GET', `${base}/runs/${runId}`, { token });
    expect(res.status).toBe(200);
    return res.body;
  };
  const events = async (runId: string) => (await app.request('GET', `${WF_BASE}/runs/${runId}/events?limit=100`, { token: 'lk_wf_all' })).body.items as any[];
  const reaches = (runId: string, status: string, base = WF_BASE, token = 'lk_wf_all') =>
    until(`run ${runId} to be ${status}`, async () => {
      const r = await detail(runId, base, token);
      return r.status === status ? r : undefined;
    });
  /** A run of another organization started and completed: the executor has made passes since. */
  const executorMovedOn = async () => reaches((await started({ workflowName: 'slow' }, GLOBEX, 'lk_wf_globex')).runId, 'completed', GLOBEX, 'lk_wf_globex');
  /** Applies the seed file with org_acme archived or not, as a changed seed file is applied. */
  async function setArchived(archived: boolean): Promise<void> {
    const seed = JSON.parse(readFileSync(seedPath, 'utf8'));
    seed.orgs[0].archived = archived;
    const path = seedPath.replace(/\.json$/, `-${archived ? 'archived' : 'live'}.json`);
    writeFileSync(path, JSON.stringify(seed));
    await applySeed(app.store.sql, await readSeedFile(path, familySeeds));
  }

  it('gates a start beyond maxSuspendedRuns on suspended_cap, rejects a batch item with that code, and releases once below', async () => {
    const e = executor();
    const flaky = await started({ workflowName: 'flaky' });
    await reaches(flaky.runId, 'suspended');

    const held = await started({ workflowName: 'nightly-report', input: { day: 'mon' } });
    expect(held.status).toBe('gated');
    expect((await detail(held.runId)).gate).toEqual({ kind: 'quota', code: 'suspended_cap', since: expect.any(Number) });
    expect((await events(held.runId))[0]).toMatchObject({ kind: 'created', status: 'gated', code: 'suspended_cap' });

    const batch = (body: unknown) => app.request('POST', `${WF_BASE}/runs/batch`, { token: 'lk_wf_all', body });
    const rejected = await batch({ workflowName: 'nightly-report', overCap: 'reject', items: [{ idempotencyKey: 'sc-1', input: { day: 'tue' } }] });
    expect(rejected.status).toBe(202);
    expect(rejected.body).toEqual({ batchId: expect.any(String), accepted: 0, items: [{ idempotencyKey: 'sc-1', status: 'rejected', code: 'suspended_cap' }] });
    const gated = await batch({ workflowName: 'nightly-report', items: [{ idempotencyKey: 'sc-2', input: { day: 'wed' } }] });
    expect(gated.body.items).toEqual([{ idempotencyKey: 'sc-2', runId: expect.any(String), status: 'gated', gate: { kind: 'quota', code: 'suspended_cap', since: expect.any(Number) } }]);

    // Other organizations are not held back, and the executor passes by the gated runs.
    await executorMovedOn();
    expect((await detail(held.runId)).status).toBe('gated');

    // The suspended run cancelled: below the cap, the gated runs go on in start order.
    const cancel = await app.request('POST', `${WF_BASE}/runs/${flaky.runId}/cancel`, { token: 'lk_wf_all', body: {} });
    expect(cancel.body.status).toBe('cancelled');
    await reaches(held.runId, 'completed');
    await reaches(gated.body.items[0].runId as string, 'completed');
    expect((await events(held.runId)).map((x) => x.kind)).toContain('released');
    await e.stop();
  }, 40_000);

  it('gates a run queued before its organization was archived (org_archived), does not run it, and runs it once un-archived', async () => {
    // No executor yet: the run stays queued.
    const queued = await started({ workflowName: 'nightly-report', input: { day: 'thu' } });
    expect(queued.status).toBe('queued');
    await setArchived(true);
    const e = executor();
    const gated = await reaches(queued.runId, 'gated');
    expect(gated.gate).toEqual({ kind: 'org_archived', since: expect.any(Number) });
    expect(gated.counts).toMatchObject({ completed: 0, running: 0, pending: 2 });
    expect((await events(queued.runId)).at(-1)).toMatchObject({ kind: 'gated', status: 'gated', code: 'org_archived' });

    // The executor goes on with other organizations' runs, and leaves this one gated.
    await executorMovedOn();
    const still = await detail(queued.runId);
    expect(still.status).toBe('gated');
    expect(still.counts.completed).toBe(0);
    // A new start is refused (within the kernel's 2 s lookup cache); reads go on.
    const refused = await until('a start to be refused', async () => {
      const res = await start({ workflowName: 'nightly-report', input: { day: 'fri' } });
      if (res.status === 202) return undefined;
      return res;
    }, 5_000);
    expect(refused.status).toBe(423);
    expect(refused.body).toMatchObject({ statusCode: 423, code: 'ORG_ARCHIVED', orgId: 'org_acme' });

    await setArchived(false);
    const done = await reaches(queued.runId, 'completed');
    expect(done.gate).toBeNull();
    const kinds = (await events(queued.runId)).map((x) => x.kind);
    expect(kinds.slice(kinds.indexOf('gated'))).toEqual(['gated', 'resumed', 'started', 'step_started', 'step_completed', 'step_started', 'step_completed', 'completed']);
    await e.stop();
  }, 40_000);
});
