/**
 * Probes (src/deliver/probes.ts): the API enqueues verify and test probes and
 * sends nothing itself; workers claim them with a lease. What users rely on:
 * the verification token is sealed at rest, a probe whose worker died is sent
 * by another once its lease has passed, a probe still running keeps its lease,
 * and two workers never both send one probe.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/server.js';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { createTransport, type Transport } from '../../../src/deliver/transport.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../src/seed/seed-file.js';
import { applySeed } from '../../../src/seed/apply.js';
import { hashToken } from '../../../src/security/token-hash.js';
import { SEED_FIXTURE, TEST_MODE, waitFor } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { startProbeWorker, type ProbeWorker } from '../../helpers/probe-worker.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const M = { authorization: 'Bearer lk_acme_manage' };

describe('probes', () => {
  let app: FastifyInstance;
  let store: Store;
  let transport: Transport;
  let receiver: HttpsReceiver;
  let config: Config;
  let db: TestDatabase | undefined;
  const workers: ProbeWorker[] = [];

  const env = (extra: Record<string, string> = {}) => loadConfig({
    DATA_DIR: 'memory://', DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '100000',
    RETRY_BASE_MS: '300', RETRY_MAX_MS: '300', PROBE_POLL_MS: '50', ...extra,
  });

  beforeAll(async () => {
    receiver = await startReceiver();
    config = env();
    if (TEST_MODE === 'kafka-postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 6 } : { dataDir: 'memory://' });
    await applySeed(store.sql, await readSeedFile(SEED_FIXTURE));
    transport = createTransport({ allowHosts: ['localhost'], extraCaCerts: receiver.ca, timeoutMs: 5000 });
    // The API alone: nothing it enqueues is sent until a worker runs.
    app = await buildApi({ config, store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) } });
    await app.ready();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    receiver.respondWith(undefined);
  });
  afterAll(async () => {
    await app?.close();
    await transport?.close();
    await store?.close();
    await receiver?.close();
    await db?.drop();
  });

  const worker = async (owner: string, cfg: Config = config) => {
    const w = await startProbeWorker({ config: cfg, store, transport, owner });
    workers.push(w);
    return w;
  };
  const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: M, ...(payload === undefined ? {} : { payload: payload as string }) });
  const probeRows = (batchId: string) => store.sql.query<Record<string, unknown>>('select * from drain_probes where batch_id = $1', [batchId]);
  const createDrain = async (name: string) => {
    const res = await inject('POST', ORG, { name, type: 'http', endpoint: `${receiver.url}/${name}` });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  /** A drain verified by a worker that is gone again once it is. */
  const verifiedDrain = async (name: string) => {
    const id = await createDrain(name);
    const w = await startProbeWorker({ config, store, transport, owner: `verifier-${name}` });
    try {
      expect((await inject('POST', `${ORG}/${id}/verify`)).statusCode).toBe(202);
      await waitFor(async () => (await inject('GET', `${ORG}/${id}`)).json().state === 'healthy', { what: 'verified' });
    } finally {
      await w.stop();
    }
    return id;
  };
  const arrivalsOf = (batchId: string) => receiver.requests.filter((r) => r.headers['x-svc-batch-id'] === batchId);

  it('keeps the verification token sealed in the probes table; only the worker opens it to send it', async () => {
    const id = await createDrain('sealed');
    const v = await inject('POST', `${ORG}/${id}/verify`);
    expect(v.statusCode).toBe(202);
    const { verificationId } = v.json();
    const [row] = await probeRows(verificationId);
    expect(row).toMatchObject({ kind: 'verify', drain_id: id, claimed_by: null });
    expect(String(row!.sealed_token)).toMatch(/^v1\./);
    // No worker yet: nothing went out.
    expect(receiver.requests.filter((r) => r.path === '/sealed')).toHaveLength(0);

    await worker('opener');
    await waitFor(async () => (await inject('GET', `${ORG}/${id}`)).json().state === 'healthy', { what: 'verified by the worker' });
    const challenge = receiver.requests.find((r) => r.path === '/sealed')!;
    const token = String(challenge.headers['x-svc-verify']);
    expect(token.length).toBeGreaterThan(20);
    expect(JSON.stringify(row)).not.toContain(token);
    expect(store.secretBox.open(String(row!.sealed_token))).toBe(token);
    const [verification] = await store.sql.query<Record<string, unknown>>('select * from drain_verifications where id = $1', [verificationId]);
    expect(verification!.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(verification)).not.toContain(token);
    // Run, so gone: the outcome lives in the drain and its deliveries.
    await waitFor(async () => (await probeRows(verificationId)).length === 0, { what: 'the probe removed' });
    const deliveries = (await inject('GET', `${ORG}/${id}/deliveries?kind=verify`)).json().deliveries;
    expect(deliveries.map((d: { batchId: string }) => d.batchId)).toEqual([verificationId]);
  });

  it('sends a probe claimed by a worker that died once its lease has passed, and not before', async () => {
    const id = await verifiedDrain('orphan');
    const sent = await inject('POST', `${ORG}/${id}/test`);
    expect(sent.statusCode).toBe(202);
    const { batchId } = sent.json();
    // A worker claims it and dies: its lease (an hour) holds the probe.
    const [claimed] = await store.probes.claim('dead-worker', 3_600_000, 10);
    expect(claimed).toMatchObject({ kind: 'test', batchId, claims: 1 });
    await worker('survivor');
    expect(await store.probes.claim('someone-else', 1000, 10)).toEqual([]);
    expect((await probeRows(batchId))[0]).toMatchObject({ claimed_by: 'dead-worker' });

    // The lease runs out (as an hour would).
    await store.sql.query("update drain_probes set claimed_until = now() - interval '1 second' where batch_id = $1", [batchId]);
    const got = await waitFor(() => arrivalsOf(batchId)[0], { what: 'the orphaned test batch' });
    expect(JSON.parse(got.body.toString()).records[0].eventName).toBe('svc.drain.test');
    await waitFor(async () => (await probeRows(batchId)).length === 0, { what: 'the probe removed' });
    expect(arrivalsOf(batchId)).toHaveLength(1);
    const deliveries = await waitFor(async () => {
      const data = (await inject('GET', `${ORG}/${id}/deliveries?kind=test`)).json().deliveries as { batchId: string; ok: boolean }[];
      return data.find((d) => d.batchId === batchId);
    }, { what: 'the test delivery record' });
    expect(deliveries.ok).toBe(true);
  });

  it('keeps the lease of a probe still retrying: another worker does not send it again', async () => {
    const id = await verifiedDrain('slow');
    let failures = 3;
    receiver.respondWith((r, res) => {
      if (r.path !== '/slow' || failures === 0) return false;
      failures--;
      res.writeHead(503).end();
      return true;
    });
    // Leases far shorter than the probe's run (three failed attempts 300 ms apart): only renewal holds them.
    const short = env({ PROBE_LEASE_MS: '150' });
    await worker('first', short);
    const sent = await inject('POST', `${ORG}/${id}/test`);
    const { batchId } = sent.json();
    const recordId = `test_${String(batchId).toLowerCase()}`;
    const withRecord = () => receiver.requests.filter((r) => r.path === '/slow' && r.body.toString().includes(recordId));
    await waitFor(() => arrivalsOf(batchId)[0], { what: 'the first attempt' });
    await worker('second', short);
    await waitFor(() => withRecord().some((r) => r.status === 200), { what: 'the test batch delivered after its retries' });
    await waitFor(async () => (await probeRows(batchId)).length === 0, { what: 'the probe removed' });
    // One probe run: one first attempt under the answered batch id, three retries, one success.
    expect(arrivalsOf(batchId)).toHaveLength(1);
    expect(withRecord()).toHaveLength(4);
  });

  it('sends each of many probes exactly once with two workers claiming at once', async () => {
    const id = await verifiedDrain('pair');
    await Promise.all([worker('left'), worker('right')]);
    const batchIds: string[] = [];
    for (let i = 0; i < 20; i++) batchIds.push((await inject('POST', `${ORG}/${id}/test`)).json().batchId);
    await waitFor(() => batchIds.every((b) => arrivalsOf(b).length > 0), { what: 'every test batch' });
    await waitFor(async () => (await store.probes.pending()) === 0, { what: 'every probe removed' });
    expect(batchIds.map((b) => arrivalsOf(b).length)).toEqual(batchIds.map(() => 1));
  });
});
