/**
 * A scaled worker pool on this machine: three worker processes in one
 * consumer group against the librdkafka broker and real Postgres, records of
 * several organizations, a destination that fails for a while, one worker
 * killed with SIGKILL and one added in the middle. Every record id arrives
 * (duplicates allowed, counted), no batch mixes organizations, and the
 * delivery records, health counters and platform copy add up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { parseBatch } from '../../helpers/receiver.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

describe('three workers, one killed and one added mid-stream, several organizations, a failing destination', () => {
  let fx: KafkaFixture;
  const workers: LogdrainProcess[] = [];
  let acmeDrain: string;
  let globexDrain: string;
  let failing = false;

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 6 });
    fx.receiver.respondWith((r, res) => {
      if (!failing || r.headers['x-svc-verify'] || r.path !== '/acme') return false;
      res.writeHead(503).end('maintenance');
      return true;
    });
    acmeDrain = await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'acme', type: 'http', endpoint: `${fx.receiver.url}/acme`, format: 'ndjson', minSeverity: 'debug' });
    globexDrain = await fx.createVerifiedDrain('org_globex', 'lk_globex_manage', { name: 'globex', type: 'http', endpoint: `${fx.receiver.url}/globex`, minSeverity: 'debug' });
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('delivers every record to its own organization only, and the accounting adds up', async () => {
    const env = { ...fx.workerEnv, PARK_AFTER_ATTEMPTS: '2', RETRY_BASE_MS: '50', RETRY_MAX_MS: '500', BACKLOG_POLL_MS: '200', HEARTBEAT_INTERVAL_MS: '0' };
    for (let i = 0; i < 3; i++) workers.push(spawnLogdrain(['worker'], env));
    await Promise.all(workers.map((w) => w.waitForEvent('kafka.joined', 60_000)));

    const producer = await fx.producer();
    const orgs = [
      { orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }, { id: 'agt_sales', name: 'sales-bot' }] },
      { orgId: 'org_globex', agents: [{ id: 'agt_globex', name: 'globex-bot' }] },
      { orgId: 'org_initech', agents: [{ id: 'agt_i', name: 'initech-bot' }] }, // no drains: routed nowhere
    ];
    const all = [...syntheticRecords(3000, { orgs, idPrefix: 'multi', seed: 11 })];
    const send = async (slice: typeof all) => {
      for (let i = 0; i < slice.length; i += 100) {
        await producer.send({ topic: fx.topic, messages: slice.slice(i, i + 100).map((r) => ({ key: r.orgId, value: JSON.stringify(r) })) });
        await new Promise((r) => setTimeout(r, 30));
      }
    };
    await send(all.slice(0, 1000));
    failing = true; // the acme destination goes down for a while
    await send(all.slice(1000, 1600));
    workers[0]!.kill('SIGKILL'); // a member dies mid-stream: its partitions move after the session timeout
    expect((await workers[0]!.exited).signal).toBe('SIGKILL');
    await send(all.slice(1600, 2200));
    const added = spawnLogdrain(['worker'], env); // and one is added: another rebalance
    workers.push(added);
    await added.waitForEvent('kafka.joined', 60_000);
    await send(all.slice(2200));
    await new Promise((r) => setTimeout(r, 1000));
    failing = false;

    const expected = (org: string) => new Set(all.filter((r) => r.orgId === org).map((r) => r.id));
    const received = (path: string) => fx.receivedIds(path);
    await waitFor(() => received('/acme').size >= expected('org_acme').size && received('/globex').size >= expected('org_globex').size, { what: 'every record', timeoutMs: 90_000, intervalMs: 500 });
    expect(new Set(received('/acme').keys())).toEqual(expected('org_acme'));
    expect(new Set(received('/globex').keys())).toEqual(expected('org_globex'));

    // No batch mixes organizations, and each carries its drain's org in the resource.
    for (const req of fx.receiver.batches()) {
      const b = parseBatch(req);
      const org = req.path === '/acme' ? 'org_acme' : 'org_globex';
      expect(b.resource['svc.org.id']).toBe(org);
      for (const r of b.records) expect(all.find((x) => x.id === r.id)?.orgId).toBe(org);
    }

    // Accounting: successful batch deliveries cover every record at least once; failures are recorded.
    const store = fx.api.store;
    await waitFor(async () => (await store.backlog.sizeOf(acmeDrain)).records === 0, { what: 'an empty backlog', timeoutMs: 30_000 });
    const rows = async (drainId: string) => store.sql.query<{ ok: boolean; record_count: number; kind: string; status_code: number | null }>('select ok, record_count, kind, status_code from deliveries where drain_id = $1', [drainId]);
    const acmeRows = await waitFor(async () => {
      const r = await rows(acmeDrain);
      const delivered = r.filter((x) => x.ok && x.kind === 'batch').reduce((n, x) => n + x.record_count, 0);
      return delivered >= expected('org_acme').size ? r : undefined;
    }, { what: 'acme accounting', timeoutMs: 10_000 });
    expect(acmeRows.some((x) => !x.ok && x.status_code === 503)).toBe(true);
    const deliveredAcme = acmeRows.filter((x) => x.ok && x.kind === 'batch').reduce((n, x) => n + x.record_count, 0);
    const receivedAcmeTotal = [...received('/acme').values()].reduce((a, b) => a + b, 0);
    expect(deliveredAcme).toBe(receivedAcmeTotal);
    const health = await store.health.facts(globexDrain);
    const globexDelivered = (await rows(globexDrain)).filter((x) => x.ok && x.kind === 'batch').reduce((n, x) => n + x.record_count, 0);
    expect(health.hourly.reduce((n, p) => n + p.delivered, 0)).toBe(globexDelivered);
    // The platform copy holds every valid record exactly once, whatever was re-read.
    const stored = await store.sql.query<{ n: number }>("select count(*)::int as n from agent_logs where id like 'multi%'");
    expect(stored[0]!.n).toBe(all.length);
    const dups = [...received('/acme').values(), ...received('/globex').values()].filter((n) => n > 1).length;
    console.info(`scale-out: ${all.length} produced, ${dups} delivered more than once`);
  }, 240_000);
});
