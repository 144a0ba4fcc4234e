/**
 * The workflow routes while their Postgres cannot be reached: the API reaches the server through a
 * TCP relay the test cuts (every connection closed, new ones refused) and restores
 * (store-relay.ts). A start with its idempotency key meanwhile answers the retryable
 * `503 CONTROL_UNAVAILABLE` with `Retry-After`; a cancel (no key: it may have applied) the same
 * code without them; a read `503 UPSTREAM_UNAVAILABLE` with `Retry-After`, all in the workflow
 * envelope. Nothing changes, and the same start retried with its key after the store is back
 * makes one run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startStoreRelay, type StoreRelay } from '../../helpers/store-relay.js';
import { WF_BASE, writeWorkflowsSeed } from '../../helpers/workflows-seed.js';

describe('workflow routes with the store unreachable', () => {
  let db: TestDatabase;
  let relay: StoreRelay;
  let app: TestApp;
  let direct: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    relay = await startStoreRelay();
    const url = new URL(db.url);
    url.host = `127.0.0.1:${relay.port}`;
    app = await startApp({
      DATABASE_URL: url.toString(), SEED_FILE: writeWorkflowsSeed(), WORKFLOW_EXECUTOR: 'false',
      WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000',
    }, 'serve');
    direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
  });
  afterAll(async () => {
    await relay?.restore().catch(() => {});
    await app?.stop().catch(() => {});
    await relay?.close().catch(() => {});
    await direct?.end().catch(() => {});
    await db?.drop().catch(() => {});
  });

  const startRun = (key: string) =>
    app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'slow' }, headers: { 'idempotency-key': key } });

  it('answers 503 in the workflow envelope while the store is down, Retry-After only where a retry is safe, and the same key makes one run once it is back', async () => {
    const first = await startRun('before-outage');
    expect(first.status).toBe(202);
    const runId = first.body.runId as string;

    await relay.cut();
    const start = await startRun('during-outage');
    expect(start.status).toBe(503);
    expect(start.body).toEqual({
      statusCode: 503, code: 'CONTROL_UNAVAILABLE', message: 'The workflow control store is unavailable; retry with the same idempotency keys.', retryAfterSeconds: 1,
    });
    expect(start.headers.get('retry-after')).toBe('1');
    const cancel = await app.request('POST', `${WF_BASE}/runs/${runId}/cancel`, { token: 'lk_wf_all', body: {} });
    expect(cancel.status).toBe(503);
    expect(cancel.body).toEqual({ statusCode: 503, code: 'CONTROL_UNAVAILABLE', message: 'The workflow control store is unavailable; the change may have been applied: read the run before repeating it.' });
    expect(cancel.headers.get('retry-after')).toBeNull();
    const read = await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'lk_wf_all' });
    expect(read.status).toBe(503);
    expect(read.body).toEqual({ statusCode: 503, code: 'UPSTREAM_UNAVAILABLE', message: expect.any(String), retryAfterSeconds: 1 });
    expect(read.headers.get('retry-after')).toBe('1');

    // Nothing was written meanwhile: the run is as it was, and no other run exists.
    const { rows } = await direct.query<{ id: string; status: string; cancel: unknown }>('select id, status, cancel from workflow_runs');
    expect(rows).toEqual([{ id: runId, status: 'queued', cancel: null }]);

    await relay.restore();
    // As a client would: retry after Retry-After with the same key until the store answers.
    const retried = await waitFor(async () => {
      const r = await startRun('during-outage');
      return r.status === 202 ? r : undefined;
    }, { what: 'the start to be accepted once the store is back', timeoutMs: 20_000 });
    const again = await startRun('during-outage');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ runId: retried.body.runId, idempotentReplay: true });
    const after = await direct.query<{ n: number }>('select count(*)::int as n from workflow_runs');
    expect(after.rows[0]!.n).toBe(2);
    const detail = await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'lk_wf_all' });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ runId });
  }, 60_000);
});
