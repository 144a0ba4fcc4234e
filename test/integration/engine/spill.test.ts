/**
 * Batching across time (BATCH_SPILL_BELOW_RECORDS, src/pipeline/spill.ts):
 * a drain fed by many agents a record at a time sends batches of a record or
 * two while live; with the spill on, it switches to the durable backlog and
 * its records come out in rounds, in full batches per agent, each agent in
 * order, none lost or repeated; once its agents fall quiet it goes live again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { createLogger } from '../../../src/telemetry/logger.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, record } from '../../helpers/records.js';
import type { AgentRecord } from '../../../src/model/record.js';

const ORG = '/admin/orgs/org_acme/log-drains';

/** Every sent record delivered exactly once, and each agent's records in the order they were sent. */
function expectEachOnceInAgentOrder(got: ReturnType<typeof parseBatch>[], sent: AgentRecord[]): void {
  const ids = got.flatMap((b) => b.records.map((r) => r.id));
  expect(ids.length).toBe(sent.length);
  expect(new Set(ids)).toEqual(new Set(sent.map((r) => r.id)));
  for (const agent of new Set(sent.map((r) => r.agentId))) {
    const delivered = got.filter((b) => b.resource['svc.agent.id'] === agent).flatMap((b) => b.records.map((r) => r.id));
    expect(delivered).toEqual(sent.filter((r) => r.agentId === agent).map((r) => r.id));
  }
}
const T = 'lk_acme_manage';
const AGENTS = 100;

describe('spill: batching across time', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  /** The worker's spill events (info lines): kept apart from the flood of per-attempt debug lines. */
  const spillEvents: { event: string; drainId: string }[] = [];
  const logger = createLogger('info', 'spill-test', {
    write(line: string) {
      if (line.includes('"drain.spill_')) spillEvents.push(JSON.parse(line));
    },
  });

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BACKLOG_POLL_MS: '100', HEARTBEAT_INTERVAL_MS: '0',
      BATCH_LINGER_MS: '50', BATCH_MAX_RECORDS: '100', BATCH_SPILL_BELOW_RECORDS: '5', BATCH_SPILL_LINGER_MS: '1500',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    }, 'start', logger);
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  it('sends a drain of many slow agents through the backlog in full per-agent batches, each agent in order, then goes live again', async () => {
    const created = await app.request('POST', ORG, { token: T, body: { name: 'spill', type: 'http', endpoint: `${receiver.url}/spill`, format: 'ndjson', minSeverity: 'debug' } });
    const id = created.body.id as string;
    await app.request('POST', `${ORG}/${id}/verify`, { token: T });
    await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.state === 'healthy', { what: 'healthy' });

    // One record an agent every 100 ms: live, each 50 ms linger gathers a record or two of an agent.
    const sent: AgentRecord[] = [];
    const started = () => spillEvents.some((e) => e.event === 'drain.spill_started' && e.drainId === id);
    for (let wave = 0; wave < 60; wave++) {
      const recs = Array.from({ length: AGENTS }, (_, a) => record({ agentId: `agt_spill_${a}`, agentName: `spill-bot-${a}`, severity: 'debug' }));
      sent.push(...recs);
      await ingest(app, recs);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(started()).toBe(true);

    const batches = () => receiver.batches().filter((r) => r.path === '/spill').map((r) => parseBatch(r));
    await waitFor(() => batches().reduce((n, b) => n + b.records.length, 0) >= sent.length, { what: 'every record delivered', timeoutMs: 60_000 });
    const got = batches();
    expectEachOnceInAgentOrder(got, sent);
    // Live batches held a record or two; rounds 1.5 s apart gather about 15 an agent.
    const sizes = got.map((b) => b.records.length);
    // The batches sent before the first round's (at least 10 records): how many go out live before
    // the spill starts depends on the machine's speed (a loaded one sends fewer), so not a fixed count.
    const firstRound = sizes.findIndex((s) => s >= 10);
    const live = sizes.slice(0, Math.min(200, firstRound === -1 ? sizes.length : firstRound));
    expect(live.length).toBeGreaterThanOrEqual(20);
    expect(live.reduce((n, s) => n + s, 0) / live.length).toBeLessThan(5);
    expect(sizes.filter((s) => s >= 10).length).toBeGreaterThanOrEqual(AGENTS);
    expect(sent.length / got.length).toBeGreaterThan(2 * (live.reduce((n, s) => n + s, 0) / live.length));

    // Quiet agents: a round finds nothing, the spill ends, and a new record goes out live.
    await waitFor(() => spillEvents.some((e) => e.event === 'drain.spill_ended' && e.drainId === id), { what: 'the spill ended', timeoutMs: 20_000 });
    await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.health.backlog === 0, { what: 'an empty backlog' });
    const later = record({ agentId: 'agt_spill_0', agentName: 'spill-bot-0', severity: 'debug' });
    await ingest(app, [later]);
    await waitFor(() => batches().some((b) => b.records.some((r) => r.id === later.id)), { what: 'the later record delivered' });
    // Every record accounted in a successful delivery record (pages of 100, keyset cursor), once written.
    const accounted = async () => {
      let n = 0;
      for (let cursor: string | null = null, page = 0; page === 0 || cursor !== null; page++) {
        const res = await app.request('GET', `${ORG}/${id}/deliveries?kind=batch&limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: T });
        n += (res.body.deliveries as { ok: boolean; recordCount: number }[]).filter((r) => r.ok).reduce((k, r) => k + r.recordCount, 0);
        cursor = res.body.nextCursor as string | null;
      }
      return n;
    };
    await waitFor(async () => (await accounted()) >= sent.length + 1, { what: 'every delivery accounted' });
    expect(await accounted()).toBe(sent.length + 1);
  }, 120_000);

  it('parks the small batches still queued when a drain starts spilling instead of sending them one by one, order kept', async () => {
    // A slow destination (150 ms an answer, 4 at a time: about 27 POSTs a second) against about 500
    // live batches a second: when the spill starts, hundreds of one-record batches wait for a slot.
    const path = '/spill-slow';
    receiver.respondWith(async (r) => {
      if (r.path === path) await new Promise((resolve) => setTimeout(resolve, 150));
      return false;
    });
    try {
      const created = await app.request('POST', ORG, { token: T, body: { name: 'spill-slow', type: 'http', endpoint: `${receiver.url}${path}`, format: 'ndjson', minSeverity: 'debug' } });
      const id = created.body.id as string;
      await app.request('POST', `${ORG}/${id}/verify`, { token: T });
      await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.state === 'healthy', { what: 'healthy' });
      const requestsBefore = receiver.batches().filter((r) => r.path === path).length;

      const agents = 50;
      const sent: AgentRecord[] = [];
      for (let wave = 0; wave < 30; wave++) {
        const recs = Array.from({ length: agents }, (_, a) => record({ agentId: `agt_slow_${a}`, agentName: `slow-bot-${a}`, severity: 'debug' }));
        sent.push(...recs);
        await ingest(app, recs);
        await new Promise((r) => setTimeout(r, 100));
      }
      const batches = () => receiver.batches().filter((r) => r.path === path).slice(requestsBefore).map((r) => parseBatch(r));
      await waitFor(() => batches().reduce((n, b) => n + b.records.length, 0) >= sent.length, { what: 'every record delivered', timeoutMs: 90_000 });
      const got = batches();
      expectEachOnceInAgentOrder(got, sent);
      const parkedUnsent = spillEvents.find((e) => e.event === 'drain.spill_parked_unsent' && e.drainId === id) as { records?: number } | undefined;
      expect(parkedUnsent?.records).toBeGreaterThan(100);
      // Sent one by one, the batches queued at the spill's start alone would be about 470 POSTs; parked,
      // the records go out in the rounds' per-agent batches: about 30 live POSTs, then 50 a round.
      expect(got.length).toBeLessThan(sent.length / 4);
    } finally {
      receiver.respondWith(undefined);
    }
  }, 120_000);
});
