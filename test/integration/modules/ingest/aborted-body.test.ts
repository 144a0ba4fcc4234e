/**
 * A client that hangs up in the middle of an ingest body: the body is read a chunk at a time as it
 * arrives (record-body.ts), so the reader is waiting for the next chunk when the socket goes. The
 * request ends as the client's own (not the store's), nothing of its body is queued, and the server
 * goes on serving. Through a real socket: the headers and a part of the body, its first records
 * whole, then the socket destroyed once the body is being read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../../src/server.js';
import { loadConfig } from '../../../../src/config/config.js';
import { openStore, type Store } from '../../../../src/store/store.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { createMetrics } from '../../../../src/telemetry/metrics.js';
import { createLogger } from '../../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../../src/seed/seed-file.js';
import { applySeed } from '../../../../src/seed/apply.js';
import { SEED_FIXTURE, TEST_MODE, waitFor } from '../../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { record } from '../../../helpers/records.js';

describe('a client aborting mid-body on the ingest route', () => {
  let app: FastifyInstance;
  let store: Store;
  let db: TestDatabase | undefined;
  let base: string;
  const events: { event?: string; reqId?: string }[] = [];
  /** Called when the ingest body is about to be read (its preParsing hook). */
  let reading: (() => void) | undefined;

  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://' });
    if (TEST_MODE === 'kafka-postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations } : { dataDir: 'memory://', migrations: familyMigrations });
    await applySeed(store.sql, await readSeedFile(SEED_FIXTURE));
    const logger = createLogger('debug', 'test', { write: (line: string) => void events.push(JSON.parse(line)) });
    app = await buildApi({
      config, store, logger, metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) },
      onRoute(route) {
        if (route.method !== 'POST' || route.url !== '/internal/records') return;
        const own = route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing];
        route.preParsing = [...own, async (_req, _reply, payload) => {
          reading?.();
          return payload;
        }];
      },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await db?.drop();
  });

  it('ends as the client\'s own, queues none of the body, and the server keeps serving', async () => {
    const cursor = await store.queue.cursor('aborted-ingest');
    const sent = Array.from({ length: 20 }, () => record({ message: 'm'.repeat(10_000) }));
    const body = JSON.stringify(sent);
    const bodyRead = new Promise<void>((resolve) => (reading = resolve));
    const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'POST /internal/records HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer lk_acme_ingest\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, body.length / 2)}`,
    );
    await bodyRead;
    reading = undefined;
    socket.destroy();

    const gone = await waitFor(() => events.find((e) => e.event === 'api.client_gone'), { what: 'the aborted ingest to reach the error handler' });
    expect(events.filter((e) => e.reqId === gone.reqId).map((e) => e.event)).not.toContain('api.store_unavailable');

    const after = await fetch(`${base}/internal/records`, {
      method: 'POST', headers: { authorization: 'Bearer lk_acme_ingest', 'content-type': 'application/json' }, body: JSON.stringify([record()]),
    });
    expect(after.status).toBe(202);
    // Only the ingest after it was queued: none of the aborted body's records, though its first ones had arrived whole.
    const queued = await store.queue.readAfter(cursor, 100, Number.MAX_SAFE_INTEGER);
    const ids = new Set(sent.map((r) => r.id));
    expect(queued).toHaveLength(1);
    expect(queued.filter((m) => ids.has((JSON.parse(m.payload) as { id: string }).id))).toEqual([]);
  });
});
