/**
 * The durable backlog (invariant 2, docs/architecture.md): records
 * for drains that are not delivering park durably and drain in order once
 * the drain delivers again; a failing destination parks instead of holding
 * the stream, so a healthy drain of the same organization never waits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, record, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('backlog', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  const failing = new Set<string>();

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify'] || !failing.has(r.path)) return false;
      res.writeHead(503, { 'retry-after': '0' }).end('down');
      return true;
    });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BACKLOG_POLL_MS: '100',
      RETRY_BASE_MS: '20', RETRY_MAX_MS: '200', BATCH_LINGER_MS: '50', BATCH_MAX_RECORDS: '25',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const idsAt = (path: string) => receiver.batches().filter((r) => r.path === path).flatMap((r) => parseBatch(r).records.map((x) => x.id));
  const get = async (id: string) => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;
  async function create(path: string) {
    const res = await app.request('POST', ORG, { token: T, body: { name: path.slice(1), type: 'http', endpoint: `${receiver.url}${path}`, format: 'ndjson' } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  async function verify(id: string) {
    await app.request('POST', `${ORG}/${id}/verify`, { token: T });
    await waitFor(async () => (await get(id)).state === 'healthy', { what: 'healthy' });
  }

  it('parks records of an unverified drain and delivers them in order after verification', async () => {
    const id = await create('/unverified');
    const sent = records(60);
    await ingest(app, sent);
    const parked = await waitFor(async () => {
      const h = (await get(id)).health;
      return h.backlog === 60 ? h : undefined;
    }, { what: '60 parked records' });
    expect(parked.backlogBytes).toBeGreaterThan(60 * 100);
    expect(idsAt('/unverified')).toEqual([]);
    await verify(id);
    await waitFor(() => idsAt('/unverified').length === 60, { what: 'the backlog delivered' });
    expect(idsAt('/unverified')).toEqual(sent.map((r) => r.id));
    await waitFor(async () => (await get(id)).health.backlog === 0, { what: 'an empty backlog' });
    // Live again: new records go straight through.
    const later = records(5);
    await ingest(app, later);
    await waitFor(() => idsAt('/unverified').length === 65, { what: 'live records' });
  });

  it('parks while paused and drains after resume', async () => {
    const id = await create('/paused');
    await verify(id);
    await app.request('POST', `${ORG}/${id}/pause`, { token: T });
    await new Promise((r) => setTimeout(r, 300)); // every worker sees the pause within DRAIN_REFRESH_MS
    const sent = records(30);
    await ingest(app, sent);
    await waitFor(async () => (await get(id)).health.backlog === 30, { what: 'parked while paused' });
    expect(idsAt('/paused')).toEqual([]);
    const resumed = await app.request('POST', `${ORG}/${id}/resume`, { token: T });
    expect(resumed.body.state).toBe('degraded');
    await waitFor(() => idsAt('/paused').length === 30, { what: 'delivered after resume' });
    expect(idsAt('/paused')).toEqual(sent.map((r) => r.id));
  });

  it('parks a failing drain after a few attempts while a healthy drain of the same organization keeps delivering', async () => {
    const sick = await create('/sick');
    const well = await create('/well');
    await verify(sick);
    await verify(well);
    failing.add('/sick');
    const first = records(40);
    await ingest(app, first);
    await waitFor(() => idsAt('/well').length === 40, { what: 'the healthy drain delivering' });
    await waitFor(async () => (await get(sick)).health.backlog === 40, { what: 'the failing drain parking', timeoutMs: 20_000 });
    const sickState = await waitFor(async () => {
      const d = await get(sick);
      return d.state === 'degraded' ? d : undefined;
    }, { what: 'degraded after repeated failures' });
    expect(sickState.health.lastFailureAt).not.toBeNull();
    expect(sickState.health.lastStatusCode).toBe(503);
    // More records while it is down: the healthy drain never waits.
    const second = records(40);
    await ingest(app, second);
    await waitFor(() => idsAt('/well').length === 80, { what: 'the healthy drain still delivering' });
    await waitFor(async () => (await get(sick)).health.backlog === 80, { what: 'all parked' });
    failing.delete('/sick');
    await waitFor(() => new Set(idsAt('/sick')).size === 80, { what: 'the sick drain recovering', timeoutMs: 20_000 });
    expect(new Set(idsAt('/sick'))).toEqual(new Set([...first, ...second].map((r) => r.id)));
    const failed = await app.request('GET', `${ORG}/${sick}/deliveries?limit=100`, { token: T });
    expect(failed.body.deliveries.some((d: { ok: boolean; errorClass?: string; statusCode?: number }) => !d.ok && d.errorClass === 'http_5xx' && d.statusCode === 503)).toBe(true);
  });
});

describe('backlog of many interleaved agents', () => {
  it('drains in full batches per agent (not one POST per change of agent), each agent in order', async () => {
    const receiver = await startReceiver();
    // Batches of at most 100 records; 20 agents interleaved record by record.
    const app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BACKLOG_POLL_MS: '100', BATCH_MAX_RECORDS: '100',
      HEARTBEAT_INTERVAL_MS: '0', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
    try {
      const created = await app.request('POST', ORG, { token: T, body: { name: 'many', type: 'http', endpoint: `${receiver.url}/many`, format: 'ndjson', minSeverity: 'debug' } });
      const id = created.body.id as string;
      const agents = Array.from({ length: 20 }, (_, i) => `agt_many_${i}`);
      const sent = Array.from({ length: 2000 }, (_, i) => record({ agentId: agents[i % agents.length]!, agentName: `bot-${i % agents.length}` }));
      for (let i = 0; i < sent.length; i += 500) await ingest(app, sent.slice(i, i + 500));
      await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.health.backlog === 2000, { what: '2000 parked', timeoutMs: 30_000 });
      await app.request('POST', `${ORG}/${id}/verify`, { token: T });
      const batches = () => receiver.batches().filter((r) => r.path === '/many').map((r) => parseBatch(r));
      await waitFor(() => batches().reduce((n, b) => n + b.records.length, 0) >= 2000, { what: 'the backlog delivered', timeoutMs: 30_000 });
      const got = batches();
      // 100 records an agent: one full batch each (a page of 5000 rows holds them all).
      expect(got.length).toBe(20);
      for (const b of got) expect(b.records).toHaveLength(100);
      for (const agent of agents) {
        const expected = sent.filter((r) => r.agentId === agent).map((r) => r.id);
        const delivered = got.filter((b) => b.resource['svc.agent.id'] === agent).flatMap((b) => b.records.map((r) => r.id));
        expect(delivered).toEqual(expected);
      }
      await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.health.backlog === 0, { what: 'an empty backlog' });
      const rows = (await app.request('GET', `${ORG}/${id}/deliveries?kind=batch&limit=100`, { token: T })).body.deliveries as { ok: boolean; recordCount: number }[];
      expect(rows.filter((r) => r.ok).reduce((n, r) => n + r.recordCount, 0)).toBe(2000);
    } finally {
      await app.stop();
      await receiver.close();
    }
  });
});

describe('backlog horizon', () => {
  it('drops records parked longer than BUFFER_HORIZON_MS into a dropped delivery record', async () => {
    const app = await startApp({ BACKLOG_POLL_MS: '100', BUFFER_HORIZON_MS: '1000', DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost' });
    try {
      const created = await app.request('POST', ORG, { token: T, body: { name: 'never', type: 'http', endpoint: 'https://localhost:1/never' } });
      const id = created.body.id as string;
      const sent = records(12);
      await ingest(app, sent);
      await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.health.backlog === 12, { what: 'parked' });
      const dropped = await waitFor(async () => {
        const r = await app.request('GET', `${ORG}/${id}/deliveries?kind=dropped`, { token: T });
        return r.body.deliveries[0];
      }, { what: 'a dropped record', timeoutMs: 10_000 });
      expect(dropped).toMatchObject({ kind: 'dropped', ok: false, errorClass: 'horizon', recordCount: 12, firstRecordId: sent[0]!.id, lastRecordId: sent[11]!.id });
      const health = (await app.request('GET', `${ORG}/${id}`, { token: T })).body.health;
      expect(health.backlog).toBe(0);
      expect(health.droppedCount24h).toBe(12);
    } finally {
      await app.stop();
    }
  });
});
