/**
 * One organization's flood of records too heavy to scrub inline, under
 * costly (legal) scrub rules, costs the other organizations neither their
 * place in the scrub pool nor the consumer's MAX_IN_FLIGHT_RECORDS budget:
 * past its cap of queued heavy records (SCRUB_MAX_QUEUED_PER_ORG) the
 * flooder's records are parked unscrubbed and scrubbed by the backlog pump,
 * so the consumer reads on. Every flooder record is still delivered, once,
 * and scrubbed. The pool's start order between organizations (a heavy record
 * waits at most for the jobs running when it came) is observed in
 * test/unit/shape/scrub-pool.test.ts; here the record path around it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { record } from '../../helpers/records.js';

/** Four rules at the per-rule cost bound: RE2 takes tens of milliseconds on 1 KB of random text over a small alphabet. */
const COSTLY = ['b.{250}c', '[a-z]{255}x', 'q[0-9a-f]{250}', '(?:ab){120}z'].map((pattern, i) => ({ id: `r${i}`, pattern }));
const randomText = (n: number) => Array.from({ length: n }, () => 'abcdef'[Math.floor(Math.random() * 6)]).join('');
const MAX_IN_FLIGHT = 100;
/** Three times the in-flight budget: held, the flood would stop the consumer until two thirds were scrubbed. */
const FLOOD = 300;
const LIGHT = 150;
/** The pool's threads (src/worker.ts: the pool's default). */
const THREADS = 2;
/** SCRUB_MAX_QUEUED_PER_ORG here. */
const CAP = 4;

const FLOOD_ORG = { drains: '/admin/orgs/org_acme/log-drains', token: 'lk_acme_manage' };
const OTHER_ORG = { drains: '/admin/orgs/org_globex/log-drains', token: 'lk_globex_manage' };

describe('a scrub flood of one organization', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, HEARTBEAT_INTERVAL_MS: '0', BATCH_LINGER_MS: '30',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000', BACKLOG_POLL_MS: '100',
      MAX_IN_FLIGHT_RECORDS: String(MAX_IN_FLIGHT), SCRUB_MAX_QUEUED_PER_ORG: String(CAP),
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  async function verifiedDrain(org: typeof FLOOD_ORG, name: string): Promise<void> {
    const res = await app.request('POST', org.drains, { token: org.token, body: { name, type: 'http', endpoint: `${receiver.url}/${name}`, format: 'ndjson', minSeverity: 'debug', scrubRules: COSTLY } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await app.request('POST', `${org.drains}/${res.body.id}/verify`, { token: org.token });
    await waitFor(async () => (await app.request('GET', `${org.drains}/${res.body.id}`, { token: org.token })).body.state === 'healthy', { what: `${name} healthy` });
  }

  /** The records that arrived at `path`, each id with its arrivals. */
  const arrivals = (path: string): Map<string, Record<string, unknown>[]> => {
    const seen = new Map<string, Record<string, unknown>[]>();
    for (const r of receiver.batches().filter((b) => b.path === path)) {
      for (const rec of parseBatch(r).records) seen.set(rec.id, [...(seen.get(rec.id) ?? []), rec]);
    }
    return seen;
  };

  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(app.workerMetricsUrl)).text();
    let n = 0;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) n += Number(m[1]);
    return n;
  };

  it('keeps the consumer reading other organizations\' records, their heavy ones first, and delivers every flooder record once', async () => {
    await verifiedDrain(FLOOD_ORG, 'flood');
    await verifiedDrain(OTHER_ORG, 'other');
    const consumedBefore = await metric('logdrain_records_consumed_total');

    const flood = Array.from({ length: FLOOD }, () => record({ orgId: 'org_acme', message: `${randomText(1024)} tok` }));
    const floodIds = new Set(flood.map((r) => r.id));
    await app.writeRaw(flood.map((r) => ({ orgId: r.orgId, payload: JSON.stringify(r) })));

    // The consumer reads the whole flood, and once the parked rows are written the flood holds in
    // flight no more than its jobs in the pool, while most of its scrubbing is still to do.
    await waitFor(async () => (await metric('logdrain_records_consumed_total')) - consumedBefore >= FLOOD, { what: 'the flood read', timeoutMs: 30_000 });
    await waitFor(async () => (await metric('logdrain_records_in_flight')) <= THREADS + CAP, { what: 'the flood out of the in-flight budget', timeoutMs: 30_000 });
    expect(arrivals('/flood').size).toBeLessThan(FLOOD / 2);

    // Another organization's heavy record and more of its light ones than the in-flight budget.
    const victim = record({ orgId: 'org_globex', message: `${randomText(1024)} tok` });
    const light = Array.from({ length: LIGHT }, (_, i) => record({ orgId: 'org_globex', message: `light ${i}` }));
    await app.writeRaw([victim, ...light].map((r) => ({ orgId: r.orgId, payload: JSON.stringify(r) })));
    await waitFor(() => [victim, ...light].every((r) => arrivals('/other').has(r.id)), { what: 'the other organization\'s records delivered', timeoutMs: 30_000 });
    // All delivered while most of the flooder's work still waits: nothing of it stood in front.
    expect(arrivals('/flood').size).toBeLessThan(FLOOD / 2);
    expect(arrivals('/other').get(victim.id)).toHaveLength(1);
    expect(String(arrivals('/other').get(victim.id)![0]!.body)).toContain('[scrubbed]');

    // Every flooder record delivered, each exactly once and scrubbed (none sent as it came).
    await waitFor(() => arrivals('/flood').size === FLOOD, { what: 'every flood record delivered', timeoutMs: 120_000, intervalMs: 200 });
    const got = arrivals('/flood');
    expect([...got.keys()].sort()).toEqual([...floodIds].sort());
    const sent = new Map(flood.map((r) => [r.id, r.message]));
    for (const [id, copies] of got) {
      expect(copies).toHaveLength(1);
      expect(copies[0]!.body).not.toBe(sent.get(id));
      expect(String(copies[0]!.body)).toContain('[scrubbed]');
    }
  }, 240_000);
});
