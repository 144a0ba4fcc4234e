/**
 * Hostile input and tenancy at the REST layer: ingest bodies refused before
 * they are read or parsed whole, bounded records, verification that belongs
 * to an endpoint, header values that do not follow a drain elsewhere,
 * secrets that are keys, header names a delivery can carry, visible names,
 * time bounds inside the calendar, and refused requests that cost nothing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
// The API serves every family: their tables too.
import { familyMigrations } from '../../../src/modules/index.js';
import { createTransport, type Transport } from '../../../src/deliver/transport.js';
import { startProbeWorker, type ProbeWorker } from '../../helpers/probe-worker.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../src/seed/seed-file.js';
import { applySeed } from '../../../src/seed/apply.js';
import { SEED_FIXTURE, TEST_MODE, waitFor } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { record } from '../../helpers/records.js';
import { MAX_INGEST_RECORDS } from '../../../src/modules/ingest/index.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const M = { authorization: 'Bearer lk_acme_manage' };
const I = { authorization: 'Bearer lk_acme_ingest' };

describe('hostile input at the REST layer', () => {
  let app: FastifyInstance;
  let store: Store;
  let transport: Transport;
  /** Sends what the verify and test routes enqueue, as a worker beside the API does. */
  let probeWorker: ProbeWorker;
  let receiver: HttpsReceiver;
  let db: TestDatabase | undefined;

  beforeAll(async () => {
    receiver = await startReceiver();
    const config = loadConfig({
      DATA_DIR: 'memory://', DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, DELIVERY_TIMEOUT_MS: '2000',
      DRAIN_RATE_LIMIT_READ_PER_MIN: '1000000', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '1000000', REQUEST_TIMEOUT_MS: '500',
      RETRY_BASE_MS: '300', RETRY_MAX_MS: '300',
    });
    // The store of the suite's mode: PGlite embedded, a fresh Postgres database in production mode.
    if (TEST_MODE === 'kafka-postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations } : { dataDir: 'memory://', migrations: familyMigrations });
    await applySeed(store.sql, await readSeedFile(SEED_FIXTURE));
    transport = createTransport({ allowHosts: ['localhost'], extraCaCerts: receiver.ca, timeoutMs: 2000 });
    probeWorker = await startProbeWorker({ config, store, transport });
    app = await buildApi({ config, store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await probeWorker?.stop();
    await transport?.close();
    await store?.close();
    await receiver?.close();
    await db?.drop();
  });

  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) =>
    app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as string }) });
  const createDrain = async (body: Record<string, unknown>) => {
    const res = await inject('POST', ORG, M, { type: 'http', endpoint: `${receiver.url}/d`, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const getDrain = async (id: string) => (await inject('GET', `${ORG}/${id}`, M)).json();
  const verify = async (id: string) => {
    expect((await inject('POST', `${ORG}/${id}/verify`, M)).statusCode).toBe(202);
    await waitFor(async () => (await getDrain(id)).state === 'healthy', { what: 'verified' });
  };

  describe('POST /internal/records', () => {
    it('refuses a request without the scope before reading its body', async () => {
      const parse = vi.spyOn(JSON, 'parse');
      try {
        const noCredential = await inject('POST', '/internal/records', { 'content-type': 'application/json' }, '[' + '{"a":'.repeat(1000) + 'not json');
        expect(noCredential.statusCode).toBe(401);
        const wrongScope = await inject('POST', '/internal/records', { ...M, 'content-type': 'application/x-ndjson' }, '{bad\n'.repeat(1000));
        expect(wrongScope.statusCode).toBe(403);
        expect(parse).not.toHaveBeenCalled();
      } finally {
        parse.mockRestore();
      }
    });

    it('stops at the record cap and never parses a record nested past the field depth', async () => {
      const parse = vi.spyOn(JSON, 'parse');
      try {
        const lines = `${JSON.stringify(record())}\n`.repeat(MAX_INGEST_RECORDS * 2);
        const over = await inject('POST', '/internal/records', { ...I, 'content-type': 'application/x-ndjson' }, lines);
        const parsed = parse.mock.calls.length;
        expect(over.statusCode).toBe(413);
        expect(over.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'records', max: MAX_INGEST_RECORDS });
        expect(parsed).toBeLessThanOrEqual(MAX_INGEST_RECORDS);
        parse.mockClear();
        const deep = `${JSON.stringify(record()).slice(0, -1)},"extra":${'['.repeat(500_000)}${']'.repeat(500_000)}}`;
        const res = await inject('POST', '/internal/records', { ...I, 'content-type': 'application/x-ndjson' }, deep);
        expect(res.json()).toEqual({ accepted: 0, rejected: [{ index: 0, errors: ['extra nests deeper than 32 levels'] }] });
        expect(parse.mock.calls.some(([text]) => String(text).length > 100_000)).toBe(false);
      } finally {
        parse.mockRestore();
      }
    });

    it('refuses unbounded fields, impossible dates and another organization\'s agent; accepts a lower-case bearer scheme', async () => {
      const res = await inject('POST', '/internal/records', { authorization: 'bearer lk_acme_ingest' }, [
        record({ agentId: 'a'.repeat(100_000) }), record({ id: 'i'.repeat(300) }), record({ timestamp: '2026-02-30T10:00:00Z' }),
        record({ agentId: 'agt_globex' }), record({ agentId: 'agt_unknown_to_the_store' }), record(),
      ]);
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({
        accepted: 2,
        rejected: [
          { index: 0, errors: ['agentId exceeds 128 bytes'] }, { index: 1, errors: ['id exceeds 256 bytes'] },
          { index: 2, errors: ['timestamp must be RFC 3339'] }, { index: 3, errors: ['agentId is an agent of another organization'] },
        ],
      });
    });

    it('cuts off a body that trickles in slower than the request time limit', async () => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as { port: number }).port;
      const socket = connect(port, '127.0.0.1');
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
      socket.on('error', () => {});
      const started = Date.now();
      socket.write('POST /internal/records HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer lk_acme_ingest\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[');
      const trickle = setInterval(() => socket.write(' '), 200);
      const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 8000))]);
      clearInterval(trickle);
      socket.destroy();
      expect(at, 'the connection was still open after 8 s').toBeGreaterThan(0);
      expect(at - started).toBeLessThan(8000);
    });
  });

  it('gives the framework 413 its field and max', async () => {
    const res = await inject('POST', ORG, { ...M, 'content-type': 'application/json' }, JSON.stringify({ name: 'n'.repeat(2 * 1024 * 1024) }));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'body', max: 1024 * 1024 });
  });

  describe('verification belongs to an endpoint', () => {
    it('a drain moved to another endpoint, paused and resumed, waits for verification again', async () => {
      const id = await createDrain({ name: 'moved' });
      await verify(id);
      const moved = await inject('PATCH', `${ORG}/${id}`, M, { endpoint: `${receiver.url}/elsewhere` });
      expect(moved.json()).toMatchObject({ state: 'pending_verification', verifiedAt: null });
      expect((await inject('POST', `${ORG}/${id}/pause`, M)).json().state).toBe('paused');
      expect((await inject('POST', `${ORG}/${id}/resume`, M)).json().state).toBe('pending_verification');
      await verify(id);
      expect((await getDrain(id)).verification.endpoint).toBe(`${receiver.url}/elsewhere`);
      expect((await inject('POST', `${ORG}/${id}/pause`, M)).json().state).toBe('paused');
      expect((await inject('POST', `${ORG}/${id}/resume`, M)).json().state).toBe('degraded');
      await inject('DELETE', `${ORG}/${id}`, M);
    });

    it('refuses a test batch to a drain whose endpoint was never verified', async () => {
      const id = await createDrain({ name: 'unverified' });
      const res = await inject('POST', `${ORG}/${id}/test`, M);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('DRAIN_NOT_VERIFIED');
      await inject('DELETE', `${ORG}/${id}`, M);
    });

    it('stops retrying a test batch once the drain has moved to another endpoint', async () => {
      const id = await createDrain({ name: 'retry-moves' });
      await verify(id);
      const path = '/always-500';
      await inject('PATCH', `${ORG}/${id}`, M, { endpoint: `${receiver.url}${path}` });
      await verify(id);
      receiver.respondWith(async (r, res) => {
        if (r.path !== path) return false;
        res.writeHead(500).end();
        return true;
      });
      const sent = await inject('POST', `${ORG}/${id}/test`, M);
      expect(sent.statusCode).toBe(202);
      await waitFor(() => receiver.requests.some((r) => r.path === path), { what: 'the first attempt' });
      await inject('PATCH', `${ORG}/${id}`, M, { endpoint: `${receiver.url}/new-home` });
      const before = receiver.requests.filter((r) => r.path === path).length;
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.requests.filter((r) => r.path === path).length).toBeLessThanOrEqual(before + 1);
      receiver.respondWith(undefined);
      await inject('DELETE', `${ORG}/${id}`, M);
    });
  });

  it('drops stored header values when the endpoint moves to another origin without them, keeps them on the same origin', async () => {
    const id = await createDrain({ name: 'headers-follow', headers: [{ name: 'Authorization', value: 'Bearer vendor-secret-123456' }] });
    const samePlace = await inject('PATCH', `${ORG}/${id}`, M, { endpoint: `${receiver.url}/other-path` });
    expect(samePlace.json().headers).toHaveLength(1);
    const elsewhere = receiver.url.replace('localhost', '127.0.0.1');
    await store.drains.update('org_acme', id, { endpoint: `${elsewhere}/x` }, true); // another origin, as the PATCH below compares
    await store.drains.update('org_acme', id, { endpoint: `${receiver.url}/other-path` }, true);
    const moved = await inject('PATCH', `${ORG}/${id}`, M, { endpoint: `https://localhost:1/attacker` });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().headers).toEqual([]);
    const regiven = await inject('PATCH', `${ORG}/${id}`, M, { endpoint: `${receiver.url}/back`, headers: [{ name: 'X-Key', value: 'given-again-123' }] });
    expect(regiven.json().headers.map((h: { name: string }) => h.name)).toEqual(['X-Key']);
    await inject('DELETE', `${ORG}/${id}`, M);
  });

  it('refuses whsec_ secrets that are not 24-64 byte keys, connection-control header names, invisible and bidi names, costly scrub rules', async () => {
    const refused = async (body: Record<string, unknown>, status: number, field: string) => {
      const res = await inject('POST', ORG, M, { name: 'refused', type: 'http', endpoint: `${receiver.url}/r`, ...body });
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.json().field).toBe(field);
    };
    await refused({ secret: 'whsec_!!!!!!!!!!!!!!!!!!!!' }, 400, 'secret');
    await refused({ secret: 'whsec_AAAAAAAAAAAA' }, 400, 'secret');
    for (const name of ['Expect', 'Upgrade', 'Keep-Alive', 'TE', 'Trailer', 'Proxy-Authorization', 'proxy-anything']) {
      await refused({ headers: [{ name, value: 'v' }] }, 400, 'headers[0].name');
    }
    for (const name of ['\u200b\u200b', '\u2060', 'evil\u202egnp.exe', 'a\u2066b']) await refused({ name }, 400, 'name');
    await refused({ scrubRules: [{ id: 'r', pattern: '.{1000}'.repeat(36) }] }, 422, 'scrubRules[0].pattern');
    await refused({ scrubRules: Array.from({ length: 5 }, (_, i) => ({ id: `r${i}`, pattern: `${i}.{250}` })) }, 422, 'scrubRules');
    const fine = await inject('POST', ORG, M, { name: 'fine', type: 'http', endpoint: `${receiver.url}/f`, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` });
    expect(fine.statusCode).toBe(201);
    await inject('DELETE', `${ORG}/${fine.json().id}`, M);
  });

  it('answers 400 for time bounds outside the calendar on every log read route', async () => {
    const H = { authorization: 'Bearer lk_acme_legacy' };
    for (const route of ['/admin/orgs/org_acme/logs', '/admin/orgs/org_acme/logs/download', '/developer/agents/agt_support/logs']) {
      for (const q of ['since=9999999w', 'since=0000-01-01', 'until=0000-12-31', 'since=0001-01-01T00:00:00Z', 'until=9999-12-31T23:59:59%2B00:00']) {
        const res = await inject('GET', `${route}?${q}`, H);
        if (q.startsWith('until=9999')) expect(res.statusCode, `${route}?${q}`).toBeLessThan(500);
        else {
          expect(res.statusCode, `${route}?${q}`).toBe(400);
          expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: q.split('=')[0] });
        }
      }
    }
  });

  it('answers a flood of refused requests from memory: no store write, no repeated key lookup', async () => {
    const limited = await buildApi({
      // No reconcile for staleness inside the flood, however slow the machine: the store sees the
      // window's start and the admitted requests' flush, never a write per refused request.
      config: loadConfig({ DATA_DIR: 'memory://', DRAIN_RATE_LIMIT_READ_PER_MIN: '2', RATE_LIMIT_SYNC_MS: '10000' }), store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: async () => {} },
    });
    const hit = vi.spyOn(store.rateLimits, 'hit');
    const findKey = vi.spyOn(store.auth, 'findKey');
    try {
      const statuses: number[] = [];
      // org_globex: no other request of this file counted in its bucket.
      for (let i = 0; i < 20; i++) statuses.push((await limited.inject({ method: 'GET', url: ORG, headers: { authorization: 'Bearer lk_not_a_key' } })).statusCode);
      for (let i = 0; i < 20; i++) statuses.push((await limited.inject({ method: 'GET', url: '/admin/orgs/org_globex/log-drains', headers: { authorization: 'Bearer lk_globex_manage' } })).statusCode);
      expect(statuses.slice(20, 22)).toEqual([200, 200]);
      expect(statuses.slice(22).every((s) => s === 429)).toBe(true);
      // This bucket's writes only: the file's other API keeps reconciling its own windows meanwhile.
      const globexHits = hit.mock.calls.filter(([, subject]) => subject === 'org_globex').length;
      expect(globexHits).toBeGreaterThanOrEqual(1);
      expect(globexHits).toBeLessThanOrEqual(3);
      expect(findKey.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      hit.mockRestore();
      findKey.mockRestore();
      await limited.close();
    }
  });
});
