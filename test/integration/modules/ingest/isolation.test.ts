/**
 * A large ingest does not hold the process: other requests are answered while
 * it is split, checked and written. Through real sockets: the API listens on a
 * port, and the order in which answers arrive is what is checked (never how
 * long anything took).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, type IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../../src/server.js';
import { loadConfig } from '../../../../src/config/config.js';
import { openStore, type Store } from '../../../../src/store/store.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { createMetrics } from '../../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../../src/seed/seed-file.js';
import { applySeed } from '../../../../src/seed/apply.js';
import { SEED_FIXTURE, TEST_MODE } from '../../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { record } from '../../../helpers/records.js';

/** The size that froze the process: 60 records of 240 KB, one 15 MB body. */
const RECORDS = 60;
const MESSAGE = 'x'.repeat(240 * 1024);

function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a large ingest and the other requests of the process', () => {
  let app: FastifyInstance;
  let store: Store;
  let db: TestDatabase | undefined;
  let port: number;
  /** Called when the ingest's body has arrived whole, just before the route splits it. */
  let onBodyReceived: (() => void) | undefined;

  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://' });
    if (TEST_MODE === 'kafka-postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations } : { dataDir: 'memory://', migrations: familyMigrations });
    await applySeed(store.sql, await readSeedFile(SEED_FIXTURE));
    app = await buildApi({ config, store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) } });
    // Registered before the body is read: this listener runs before the one that hands the body to the route's parser.
    app.addHook('onRequest', async (req) => {
      if (req.url === '/internal/records') req.raw.once('end', () => onBodyReceived?.());
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await db?.drop();
  });

  it('answers /healthz, asked once the ingest body has arrived, before the ingest answers; the ingest is then written whole', async () => {
    const answered: string[] = [];
    let healthz: Promise<{ status: number; body: string }> | undefined;
    onBodyReceived = () => {
      onBodyReceived = undefined;
      healthz = send(port, 'GET', '/healthz', {}).then((r) => {
        answered.push('healthz');
        return r;
      });
    };
    const body = JSON.stringify(Array.from({ length: RECORDS }, () => record({ message: MESSAGE })));
    const cursor = await store.queue.cursor('ingest-isolation');
    const ingest = await send(port, 'POST', '/internal/records', { authorization: 'Bearer lk_acme_ingest', 'content-type': 'application/json' }, body);
    answered.push('ingest');

    expect(ingest.status, ingest.body).toBe(202);
    expect(JSON.parse(ingest.body)).toEqual({ accepted: RECORDS, rejected: [] });
    expect(healthz, 'the ingest body was received').toBeDefined();
    expect((await healthz!).status).toBe(200);
    expect(answered).toEqual(['healthz', 'ingest']);
    // Written whole and in the body's order.
    const queued = await store.queue.readAfter(cursor, RECORDS * 2, Number.MAX_SAFE_INTEGER);
    const sent = (JSON.parse(body) as { id: string }[]).map((r) => r.id);
    expect(queued.map((m) => (JSON.parse(m.payload) as { id: string }).id).slice(-RECORDS)).toEqual(sent);
  });
});
