/**
 * POST /workflows/:agentId/runs/batch (spec 03 part 4.3, contract W4): per-item outcomes in the
 * order sent, the concurrency cap's two modes, keys replayed across batches and single starts,
 * item and batch refusals that create no run, the in-flight rule and the 2 MB body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startWorkflowsApi, WF_BASE } from '../../../helpers/workflows.js';

describe('workflow batch starts', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startWorkflowsApi({
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_BATCH_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const batch = (body: unknown, base = WF_BASE, token = 'lk_wf_all') => app.request('POST', `${base}/runs/batch`, { token, body });
  const runCount = async () => ((await app.store.sql.query<{ n: number }>('select count(*)::int as n from workflow_runs')) as [{ n: number }])[0].n;

  it('starts one run per item, answering each in the order sent', async () => {
    const res = await batch({ workflowName: 'nightly-report', items: [{ idempotencyKey: 'b1-a', input: { day: 'a' }, tags: ['x'] }, { idempotencyKey: 'b1-b', input: { day: 'b' }, correlationKey: 'c:1' }] });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      batchId: expect.stringMatching(/^wfb_/), accepted: 2,
      items: [
        { idempotencyKey: 'b1-a', runId: expect.stringMatching(/^wfr_/), status: 'queued' },
        { idempotencyKey: 'b1-b', runId: expect.stringMatching(/^wfr_/), status: 'queued' },
      ],
    });
    const listed = await app.request('GET', `${WF_BASE}/runs?batchId=${res.body.batchId}`, { token: 'lk_wf_all' });
    expect(listed.body.items.map((r: { runId: string }) => r.runId).sort()).toEqual(res.body.items.map((i: { runId: string }) => i.runId).sort());
    const b = listed.body.items.find((r: { runId: string }) => r.runId === res.body.items[1].runId);
    expect(b).toMatchObject({ batchId: res.body.batchId, correlationKey: 'c:1', workflowId: 'wf_report', trigger: 'api' });
  });

  it('replays an item key seen before, by a batch or a single start', async () => {
    const single = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'nightly-report', input: { day: 's' }, idempotencyKey: 'b2-single' } });
    const first = await batch({ workflowId: 'wf_report', items: [{ idempotencyKey: 'b2-a', input: { day: 'a' } }] });
    const again = await batch({ workflowId: 'wf_report', items: [{ idempotencyKey: 'b2-a', input: { day: 'a' } }, { idempotencyKey: 'b2-single', input: { day: 's' } }, { idempotencyKey: 'b2-new', input: { day: 'n' } }] });
    expect(again.body.accepted).toBe(1);
    expect(again.body.items).toEqual([
      { idempotencyKey: 'b2-a', runId: first.body.items[0].runId, status: 'replayed' },
      { idempotencyKey: 'b2-single', runId: single.body.runId, status: 'replayed' },
      { idempotencyKey: 'b2-new', runId: expect.any(String), status: 'queued' },
    ]);
    // And a batch's key replays in a single start.
    const replay = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'nightly-report', input: { day: 'n' }, idempotencyKey: 'b2-new' } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ runId: again.body.items[2].runId, idempotentReplay: true });
  });

  it('gates items over the organization\'s cap, or rejects them with overCap reject', async () => {
    const base = '/workflows/agt_globex';
    const gated = await batch({ workflowName: 'slow', items: [{ idempotencyKey: 'g1' }, { idempotencyKey: 'g2' }] }, base, 'lk_wf_globex');
    expect(gated.body.accepted).toBe(2);
    expect(gated.body.items[0].status).toBe('queued');
    expect(gated.body.items[1]).toEqual({ idempotencyKey: 'g2', runId: expect.any(String), status: 'gated', gate: { kind: 'quota', code: 'concurrency_cap', since: expect.any(Number) } });
    const rejected = await batch({ workflowName: 'slow', overCap: 'reject', items: [{ idempotencyKey: 'g3' }] }, base, 'lk_wf_globex');
    expect(rejected.body).toEqual({ batchId: expect.any(String), accepted: 0, items: [{ idempotencyKey: 'g3', status: 'rejected', code: 'concurrency_cap' }] });
    // A rejected item's key is free for a later try.
    const forbid = await batch({ workflowName: 'slow', inFlight: 'forbid', items: [{ idempotencyKey: 'g3' }] }, base, 'lk_wf_globex');
    expect(forbid.status).toBe(409);
    expect(forbid.body).toEqual({ statusCode: 409, code: 'RUNS_IN_FLIGHT', message: 'Workflow wf_g_slow has runs in flight; inFlight is forbid', workflowId: 'wf_g_slow' });
    // Once both settle, the same key is accepted.
    for (let i = 0; i < 200; i++) {
      const busy = await app.store.sql.query("select 1 from workflow_runs where workflow_id = 'wf_g_slow' and status not in ('completed', 'cancelled')");
      if (busy.length === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const later = await batch({ workflowName: 'slow', inFlight: 'forbid', overCap: 'reject', items: [{ idempotencyKey: 'g3' }] }, base, 'lk_wf_globex');
    expect(later.body.items).toEqual([{ idempotencyKey: 'g3', runId: expect.any(String), status: 'queued' }]);
  }, 20_000);

  it('refuses a batch with an invalid item or a repeated key, creating no run', async () => {
    const before = await runCount();
    const invalid = await batch({ workflowName: 'nightly-report', items: [{ idempotencyKey: 'b3-a', input: { day: 'a' } }, { idempotencyKey: 'b3-b', input: {} }] });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      statusCode: 400, code: 'BATCH_ITEM_INVALID', message: 'items[1] is invalid: input.day is required', index: 1,
      issues: [{ path: 'input.day', constraint: 'required', message: 'input.day is required' }],
    });
    const repeated = await batch({ workflowName: 'nightly-report', items: [{ idempotencyKey: 'b3-c', input: { day: 'a' } }, { idempotencyKey: 'b3-c', input: { day: 'b' } }] });
    expect(repeated.body).toMatchObject({ code: 'BATCH_ITEM_INVALID', index: 1, issues: [{ path: 'idempotencyKey', constraint: 'uniqueItems', message: 'idempotencyKey b3-c is used by an earlier item of this batch' }] });
    const keyless = await batch({ workflowName: 'nightly-report', items: [{ input: { day: 'a' } }] });
    expect(keyless.body).toMatchObject({ code: 'BATCH_ITEM_INVALID', index: 0, issues: [{ path: 'idempotencyKey', constraint: 'required', message: 'idempotencyKey is required: 1 to 128 characters' }] });
    expect(await runCount()).toBe(before);
    // The first item's key was not used.
    expect((await batch({ workflowName: 'nightly-report', items: [{ idempotencyKey: 'b3-a', input: { day: 'a' } }] })).body.items[0].status).toBe('queued');
  });

  it('refuses more than 200 items with BATCH_TOO_LARGE, a body over 2 MB with 413, and an unknown definition with 404', async () => {
    const items = Array.from({ length: 201 }, (_, i) => ({ idempotencyKey: `big-${i}`, input: { day: 'd' } }));
    const tooMany = await batch({ workflowName: 'nightly-report', items });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toEqual({ statusCode: 400, code: 'BATCH_TOO_LARGE', message: 'A batch holds at most 200 items; this one holds 201', max: 200, count: 201 });
    const huge = await batch({ workflowName: 'nightly-report', items: [{ idempotencyKey: 'huge', input: { day: 'x'.repeat(2 * 1024 * 1024) } }] });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
    const unknown = await batch({ workflowName: 'nope', items: [{ idempotencyKey: 'u' }] });
    expect(unknown.body).toMatchObject({ statusCode: 404, code: 'WORKFLOW_NOT_FOUND' });
    const both = await batch({ workflowName: 'nightly-report', workflowId: 'wf_report', items: [{ idempotencyKey: 'u' }] });
    expect(both.body.details).toEqual([
      { path: 'workflowName', constraint: 'oneOf', message: 'exactly one of workflowName or workflowId is required' },
      { path: 'workflowId', constraint: 'oneOf', message: 'exactly one of workflowName or workflowId is required' },
    ]);
    const empty = await batch({ workflowName: 'nightly-report', items: [] });
    expect(empty.body.details).toEqual([{ path: 'items', constraint: 'minItems', message: 'items must hold at least one item' }]);
  });

  it('needs workflows:execute', async () => {
    const res = await batch({ workflowName: 'nightly-report', items: [{ idempotencyKey: 'r', input: { day: 'd' } }] }, WF_BASE, 'lk_wf_read');
    expect(res.body).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: 'workflows:execute' });
  });
});
