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

function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<{ status: number; body: string }> {
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

  it('reads a large body off its thread with every record judged as a small one is: refusals by index, the rest written in order', async () => {
    const cursor = await store.queue.cursor('ingest-isolation');
    const big = (id: string, p: Record<string, unknown> = {}) => JSON.stringify({ ...record({ id, message: 'y'.repeat(100 * 1024) }), ...p });
    const lines = [big('r0'), '{"not": json', big('r2', { orgId: 'org_globex' }), big('r3', { severity: 'loud' }), big('r4'), Buffer.from([0x7b, 0xff, 0x7d]), big('r6')];
    const body = Buffer.concat(lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')])));
    const answer = await send(port, 'POST', '/internal/records', { authorization: 'Bearer lk_acme_ingest', 'content-type': 'application/x-ndjson' }, body);
    expect(answer.status, answer.body).toBe(202);
    const { accepted, rejected } = JSON.parse(answer.body) as { accepted: number; rejected: { index: number; errors: string[] }[] };
    expect(accepted).toBe(3);
    expect(rejected.map((r) => r.index)).toEqual([1, 2, 3, 5]);
    expect(rejected[0]!.errors).toEqual(['not valid JSON']);
    expect(rejected[1]!.errors).toEqual(["orgId is not the credential's organization"]);
    expect(rejected[3]!.errors[0]).toMatch(/^not valid UTF-8/);
    const queued = await store.queue.readAfter(cursor, 100_000, Number.MAX_SAFE_INTEGER);
    expect(queued.map((m) => (JSON.parse(m.payload) as { id: string }).id).slice(-3)).toEqual(['r0', 'r4', 'r6']);
  });

  it('refuses a large body past the record cap whole, writing nothing of it', async () => {
    const cursor = await store.queue.cursor('ingest-isolation');
    const before = await store.queue.readAfter(cursor, 100_000, Number.MAX_SAFE_INTEGER);
    const one = JSON.stringify(record({ message: 'z' }));
    const body = `[${Array.from({ length: 10_001 }, () => one).join(',')}]`;
    const answer = await send(port, 'POST', '/internal/records', { authorization: 'Bearer lk_acme_ingest', 'content-type': 'application/json' }, body);
    expect(answer.status, answer.body).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect((await store.queue.readAfter(cursor, 100_000, Number.MAX_SAFE_INTEGER)).length).toBe(before.length);
  });
});
