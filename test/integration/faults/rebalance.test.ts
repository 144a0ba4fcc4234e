/**
 * A rebalance during delivery: two workers of one consumer group
 * deliver to a slow destination (every batch in flight for 300 ms), records
 * of two organizations spread over six partitions. A third worker joins in
 * the middle of the stream, then one of the first two leaves gracefully
 * (SIGTERM), each time while batches are in flight: partitions move, and
 * what was not yet accounted is re-read by the new owner. Both drains'
 * ledgers balance (duplicates counted), the delivery records agree with what
 * arrived, the leaver exits 0 and the others keep going, then stop cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { dumpLogOnFailure, expectDeliveryRecordsAgree, expectGracefulStop, expectLedgersBalanced, sleep, type DrainUnderTest } from '../../helpers/fault-kit.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

const PARTITIONS = 6;

describe('a rebalance while batches are in flight: a worker joins, then one leaves gracefully', () => {
  let fx: KafkaFixture;
  const workers: LogdrainProcess[] = [];
  const drains = new Map<string, { drainId: string; path: string }>();

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: PARTITIONS });
    for (const [orgId, token, path] of [['org_acme', 'lk_acme_manage', '/rb-acme'], ['org_globex', 'lk_globex_manage', '/rb-globex']] as const) {
      const drainId = await fx.createVerifiedDrain(orgId, token, { name: path.slice(1), type: 'http', endpoint: `${fx.receiver.url}${path}`, format: 'ndjson', minSeverity: 'debug' });
      drains.set(orgId, { drainId, path });
    }
    // A slow destination: every batch is in flight for 300 ms.
    fx.answerSlowly(300);
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('loses no record on either drain when partitions move mid-delivery', async () => {
    const env = { ...fx.workerEnv, HEARTBEAT_INTERVAL_MS: '0' };
    const spawnWorker = () => {
      const w = spawnLogdrain(['worker'], env);
      workers.push(w);
      dumpLogOnFailure(w, 15);
      return w;
    };
    const [a, b] = [spawnWorker(), spawnWorker()];
    await Promise.all([a.waitForEvent('kafka.joined', 30_000), b.waitForEvent('kafka.joined', 30_000)]);

    const orgs = [
      { orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }, { id: 'agt_sales', name: 'sales-bot' }] },
      { orgId: 'org_globex', agents: [{ id: 'agt_globex', name: 'globex-bot' }] },
    ];
    const all = [...syntheticRecords(3000, { orgs, idPrefix: 'rebal', seed: 8 })];
    const producer = await fx.producer();
    // Keys spread each organization over every partition, so a rebalance moves records of both.
    const producing = (async () => {
      for (let i = 0; i < all.length; i += 40) {
        const slice = all.slice(i, i + 40);
        await producer.send({ topic: fx.topic, messages: slice.map((r, j) => ({ key: `${r.orgId}-${(i + j) % PARTITIONS}`, value: JSON.stringify(r) })) });
        await sleep(250);
      }
    })();
    // A failed wait below ends the test while this loop still sends: its later error (the fixture's
    // producer closed) belongs to that failure, not to an unhandled rejection after it.
    producing.catch(() => {});
    const received = () => [...drains.values()].reduce((n, d) => n + fx.receivedIds(d.path).size, 0);
    const inFlight = () => fx.receiver.batches().filter((r) => !r.headers['x-svc-verify'] && r.status === undefined).length;

    await waitFor(() => received() >= 400 && inFlight() > 0, { what: 'deliveries under way', timeoutMs: 30_000, intervalMs: 10 });
    const c = spawnWorker(); // joins: every member gives up and takes back partitions
    const joinedAt = { received: received(), inFlight: inFlight() };
    await c.waitForEvent('kafka.joined', 30_000);

    await waitFor(() => received() >= joinedAt.received + 600 && inFlight() > 0, { what: 'deliveries under way again', timeoutMs: 30_000, intervalMs: 10 });
    const leftAt = { received: received(), inFlight: inFlight() };
    await expectGracefulStop(a); // leaves: its partitions move to b and c
    await producing;
    console.info(`rebalance: third worker joined at ${JSON.stringify(joinedAt)}, first left at ${JSON.stringify(leftAt)} (records received, batches in flight)`);
    expect(leftAt.received).toBeLessThan(all.length * 0.9);

    const underTest: DrainUnderTest[] = orgs.map((o) => ({ ...drains.get(o.orgId)!, produced: all.filter((r) => r.orgId === o.orgId).map((r) => r.id) }));
    const reports = await expectLedgersBalanced(fx, underTest, 'rebalance', 45_000);
    for (const r of reports) expect(r.droppedByReason).toEqual({});
    for (const d of underTest) await expectDeliveryRecordsAgree(fx, d);

    // The remaining members went through the rebalances (joined more than once) and are still up.
    for (const w of [b, c]) expect(w.child.exitCode).toBeNull();
    expect(b.lines.filter((l) => l.event === 'kafka.joined').length).toBeGreaterThanOrEqual(2);
    await Promise.all([expectGracefulStop(b), expectGracefulStop(c)]);
  }, 120_000);
});
