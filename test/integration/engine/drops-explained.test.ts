/**
 * Where every record went: a mixed load driving every reason a record of a drain's organization is
 * not delivered (quota, horizon, permanent, oversize, dead_letter, sampling, selector), checked
 * against the read form's 24-hour summary, its hourly points and the worker's metrics:
 * seen = delivered + dropped by reason + in flight + parked, with in flight 0 once the worker is idle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, record, records } from '../../helpers/records.js';
import { sampledIn } from '../../../src/select/selector.js';
import { DROP_REASONS, noDrops, type DroppedByReason } from '../../../src/model/drop-reasons.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';
const SAMPLE_RATE = 0.5;

interface Last24h { seen: number; delivered: number; droppedByReason: DroppedByReason; inFlight: number; parked: number }

/** Execution ids the drain's debug sampling keeps (`true`) or leaves out (`false`). */
function executions(kept: boolean, count: number): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) if (sampledIn(`exe-drops-${i}`, SAMPLE_RATE) === kept) ids.push(`exe-drops-${i}`);
  return ids;
}

describe('every record of a drain accounted for by reason', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    // The destination refuses for good (400) every batch of the agent agt_reject.
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify'] || !r.body.toString('utf8').includes('agt_reject')) return false;
      res.writeHead(400).end('refused');
      return true;
    });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BACKLOG_POLL_MS: '100',
      RETRY_BASE_MS: '20', RETRY_MAX_MS: '100', BATCH_LINGER_MS: '30', DRAIN_QUOTA_EVENTS_PER_DAY: '100',
      BUFFER_HORIZON_MS: '6000', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  it('adds up through quota, horizon, permanent, oversize, dead_letter, sampling and selector', async () => {
    const created = await app.request('POST', ORG, {
      token: T,
      body: { name: 'mixed', type: 'http', endpoint: `${receiver.url}/mixed`, minSeverity: 'debug', environments: ['production'], sampling: { debug: SAMPLE_RATE } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const read = async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;
    await app.request('POST', `${ORG}/${id}/verify`, { token: T });
    await waitFor(async () => (await read()).state === 'healthy', { what: 'healthy' });

    let seen = 0;
    /** The read form once every record written so far has settled (in flight 0), checked to add up. */
    const settled = async (what: string, extra: (d: any) => boolean = () => true) => {
      const d = await waitFor(async () => {
        const r = await read();
        return r.health.last24h.seen === seen && r.health.last24h.inFlight === 0 && extra(r) ? r : undefined;
      }, { what, timeoutMs: 30_000 });
      const s: Last24h = d.health.last24h;
      const dropped = DROP_REASONS.reduce((n, r) => n + s.droppedByReason[r], 0);
      expect(s.delivered + dropped + s.inFlight + s.parked).toBe(s.seen);
      expect(s.parked).toBe(d.health.backlog);
      expect(s.delivered).toBe(d.health.deliveredCount24h);
      // The hourly points hold the same counts: the summary is their sum.
      const hourly = d.health.hourly as { seen: number; delivered: number; dropped: number; droppedByReason: DroppedByReason }[];
      expect(hourly.reduce((n, p) => n + p.seen, 0)).toBe(s.seen);
      expect(hourly.reduce((n, p) => n + p.delivered, 0)).toBe(s.delivered);
      const byHour = noDrops();
      for (const p of hourly) {
        for (const r of DROP_REASONS) byHour[r] += p.droppedByReason[r];
        // `dropped` is the failures' total; sampling and selector are counted apart.
        expect(p.dropped).toBe(p.droppedByReason.quota + p.droppedByReason.horizon + p.droppedByReason.permanent + p.droppedByReason.oversize + p.droppedByReason.dead_letter);
      }
      expect(byHour).toEqual(s.droppedByReason);
      return { read: d, last24h: s };
    };

    // 80 of the quota's 100 events delivered: the ladder starts dropping debug records.
    await ingest(app, records(80, { severity: 'info' }));
    seen += 80;
    await settled('80 delivered', (d) => d.quota.degradation === 'drop_debug');
    // Debug records the sampling keeps, one at a time, until the worker's ladder drops one (quota).
    const kept = executions(true, 30);
    let quota = 0;
    for (let i = 0; quota === 0; i++) {
      expect(i).toBeLessThan(kept.length);
      await ingest(app, [record({ severity: 'debug', executionId: kept[i] })]);
      seen += 1;
      quota = (await settled(`debug record ${i}`)).last24h.droppedByReason.quota;
    }
    const afterQuota = (await settled('after the quota drops')).last24h;
    expect(afterQuota.delivered + afterQuota.droppedByReason.quota).toBe(seen);

    // The mixed load: delivered, refused for good, left out by selectors and by sampling, malformed, too large.
    await ingest(app, [
      ...records(5, { severity: 'warn' }),
      ...records(3, { severity: 'warn', agentId: 'agt_reject', agentName: 'reject-bot' }),
      ...records(2, { severity: 'warn', environment: 'sandbox' }),
      ...executions(false, 4).map((executionId) => record({ severity: 'debug', executionId })),
    ]);
    const malformed = { ...record(), severity: 'loud' };
    const oversize = record({ message: 'x'.repeat(300 * 1024) });
    await app.writeRaw([{ orgId: 'org_acme', payload: JSON.stringify(malformed) }, { orgId: 'org_acme', payload: JSON.stringify(oversize) }]);
    seen += 5 + 3 + 2 + 4 + 2;
    const mixed = (await settled('the mixed load')).last24h;
    expect(mixed).toEqual({
      seen,
      delivered: afterQuota.delivered + 5,
      droppedByReason: { ...noDrops(), quota: afterQuota.droppedByReason.quota, permanent: 3, selector: 2, sampling: 4, dead_letter: 1, oversize: 1 },
      inFlight: 0,
      parked: 0,
    });

    // Paused: its records park, then pass the buffer horizon.
    expect((await app.request('POST', `${ORG}/${id}/pause`, { token: T })).status).toBe(200);
    await ingest(app, records(4, { severity: 'warn' }));
    seen += 4;
    const parked = (await settled('4 parked', (d) => d.health.backlog === 4)).last24h;
    expect(parked.parked).toBe(4);
    expect(parked.droppedByReason.horizon).toBe(0);
    const { read: final, last24h } = await settled('4 past the horizon', (d) => d.health.last24h.droppedByReason.horizon === 4);
    expect(last24h).toEqual({ ...mixed, seen, droppedByReason: { ...mixed.droppedByReason, horizon: 4 }, parked: 0 });
    expect(final.health.droppedCount24h).toBe(afterQuota.droppedByReason.quota + 4 + 3 + 1 + 1);

    // The worker's metric counts the same reasons (one drain: its type's series are this drain's).
    const metrics = await (await fetch(app.workerMetricsUrl)).text();
    const metric = (reason: string) => Number(new RegExp(`logdrain_records_not_delivered_total\\{drain_type="http",reason="${reason}",role="[a-z]+"\\} (\\d+)`).exec(metrics)?.[1]);
    for (const r of DROP_REASONS) expect(metric(r), r).toBe(last24h.droppedByReason[r]);
  });
});
