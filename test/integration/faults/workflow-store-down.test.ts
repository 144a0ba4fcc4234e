/**
 * The workflow control routes while their Postgres cannot be reached: the API reaches the server
 * through a TCP relay the test cuts (every connection closed, new ones refused) and restores. A
 * start or a cancel meanwhile answers the retryable `503 CONTROL_UNAVAILABLE` with `Retry-After`,
 * changes nothing, and the same start retried with its idempotency key after the store is back
 * makes one run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { WF_BASE, writeWorkflowsSeed } from '../../helpers/workflows-seed.js';

/** A TCP relay to the local Postgres that can be cut and restored on the same port. */
async function startRelay(): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () => new Promise<void>((resolve, reject) => {
    const s = createServer((client) => {
      const upstream = connect(5432, '127.0.0.1');
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('error', () => {});
        sock.on('close', () => sockets.delete(sock));
      }
      client.pipe(upstream).pipe(client);
    });
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      port = (s.address() as { port: number }).port;
      server = s;
      resolve();
    });
  });
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    await new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}

describe('workflow control routes with the store unreachable', () => {
  let db: TestDatabase;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let app: TestApp;
  let direct: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    relay = await startRelay();
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

  it('answers 503 CONTROL_UNAVAILABLE with Retry-After while the store is down, and the same key makes one run once it is back', async () => {
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
    expect(cancel.body.code).toBe('CONTROL_UNAVAILABLE');

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
  }, 60_000);
});
