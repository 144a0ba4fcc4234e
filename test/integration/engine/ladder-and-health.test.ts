/**
 * The quota ladder, outcome-driven state moves and configuration changes
 * reaching the worker within seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('quota ladder, health moves, configuration changes', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  let failing = false;

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify'] || !failing || r.path !== '/flaky') return false;
      res.writeHead(500).end('nope');
      return true;
    });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BACKLOG_POLL_MS: '100',
      RETRY_BASE_MS: '20', RETRY_MAX_MS: '100', BATCH_LINGER_MS: '30', DRAIN_QUOTA_EVENTS_PER_DAY: '100',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const get = async (id: string) => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;
  const idsAt = (path: string) => receiver.batches().filter((r) => r.path === path).flatMap((r) => parseBatch(r).records.map((x) => x.id));
  async function verifiedDrain(path: string, extra: Record<string, unknown> = {}) {
    const res = await app.request('POST', ORG, { token: T, body: { name: path.slice(1), type: 'http', endpoint: `${receiver.url}${path}`, minSeverity: 'debug', ...extra } });
    expect(res.status).toBe(201);
    await app.request('POST', `${ORG}/${res.body.id}/verify`, { token: T });
    await waitFor(async () => (await get(res.body.id)).state === 'healthy', { what: 'healthy' });
    return res.body.id as string;
  }

  it('climbs the ladder: drops debug past 80%, info past 90%, pauses at 100% with quota_paused', async () => {
    const id = await verifiedDrain('/quota');
    await ingest(app, records(80, { severity: 'info' }));
    await waitFor(async () => (await get(id)).quota.usedEvents === 80, { what: '80 events used' });
    await waitFor(async () => (await get(id)).quota.degradation === 'drop_debug', { what: 'drop_debug' });
    await new Promise((r) => setTimeout(r, 300)); // the worker reads usage every DRAIN_REFRESH_MS
    const debug = records(5, { severity: 'debug' });
    const info = records(10, { severity: 'info' });
    await ingest(app, [...debug, ...info]);
    await waitFor(async () => (await get(id)).quota.usedEvents === 90, { what: '90 events used' });
    const delivered = new Set(idsAt('/quota'));
    expect(debug.some((r) => delivered.has(r.id))).toBe(false);
    expect(info.every((r) => delivered.has(r.id))).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const moreInfo = records(5, { severity: 'info' });
    const warn = records(10, { severity: 'warn' });
    await ingest(app, [...moreInfo, ...warn]);
    const paused = await waitFor(async () => {
      const d = await get(id);
      return d.state === 'paused' ? d : undefined;
    }, { what: 'quota pause' });
    expect(paused.health.pauseReason).toBe('quota');
    expect(paused.quota.degradation).toBe('paused');
    expect(paused.quota.usedEvents).toBe(100);
    const delivered2 = new Set(idsAt('/quota'));
    expect(moreInfo.some((r) => delivered2.has(r.id))).toBe(false);
    const drops = await app.request('GET', `${ORG}/${id}/deliveries?kind=dropped&limit=100`, { token: T });
    expect(drops.body.deliveries.every((d: { errorClass: string }) => d.errorClass === 'quota')).toBe(true);
    expect(drops.body.deliveries.reduce((n: number, d: { recordCount: number }) => n + d.recordCount, 0)).toBe(10);
    const audit = await app.request('GET', `/admin/orgs/org_acme/log-drains-audit?drainId=${id}&action=logs.drain.quota_paused`, { token: T });
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0].actor).toEqual({ type: 'system', id: 'quota-ladder' });
  });

  it('moves healthy to degraded after failures and back to healthy after successes', async () => {
    const id = await verifiedDrain('/flaky');
    failing = true;
    await ingest(app, records(3));
    await waitFor(async () => (await get(id)).state === 'degraded', { what: 'degraded' });
    failing = false;
    for (let i = 0; i < 6; i++) {
      await ingest(app, records(2));
      await new Promise((r) => setTimeout(r, 120));
    }
    await waitFor(async () => (await get(id)).state === 'healthy', { what: 'healthy again', timeoutMs: 20_000 });
  });

  it('applies a PATCH to the worker within seconds', async () => {
    const id = await verifiedDrain('/patched', { minSeverity: 'info' });
    await app.request('PATCH', `${ORG}/${id}`, { token: T, body: { minSeverity: 'error', redact: ['secret.attr'] } });
    await new Promise((r) => setTimeout(r, 400));
    const warn = records(3, { severity: 'warn' });
    const error = records(3, { severity: 'error', attributes: { 'secret.attr': 'x', kept: 'y' } });
    await ingest(app, [...warn, ...error]);
    await waitFor(() => idsAt('/patched').length >= 3, { what: 'error records delivered' });
    await new Promise((r) => setTimeout(r, 200));
    const got = receiver.batches().filter((r) => r.path === '/patched').flatMap((r) => parseBatch(r).records);
    expect(got.map((r) => r.id)).toEqual(error.map((r) => r.id));
    for (const r of got) expect(r.attributes).toEqual({ kept: 'y', 'svc.execution.id': expect.any(String) });
  });
});
