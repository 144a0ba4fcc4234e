/**
 * Kafka broker faults, against a three-broker librdkafka mock
 * cluster: the leader of the partition being consumed goes down mid-stream
 * and comes back, then every broker goes down at once and comes back, then
 * the brokers answer requests with injected errors (Fetch: not leader,
 * request timed out; OffsetCommit: rebalance in progress, not coordinator;
 * Heartbeat: rebalance in progress; JoinGroup: coordinator loading). The
 * worker stays up throughout, every record is received (the ledger), and a
 * SIGTERM afterwards still stops it with exit 0. Sessions are the
 * fixture's (6 s): a session shorter than kafkajs's fetch long-poll would
 * evict a healthy member and test nothing but that.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { startKafkaFixture, produceStream, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { dumpLogOnFailure, expectDeliveryRecordsAgree, expectGracefulStop, expectLedgersBalanced, sleep } from '../../helpers/fault-kit.js';

const BROKERS = 3;
// Kafka API keys and error codes (the Kafka protocol's numbering).
const API = { Fetch: 1, OffsetCommit: 8, JoinGroup: 11, Heartbeat: 12 } as const;
const ERR = { INVALID_REQUEST: 42, NOT_LEADER_FOR_PARTITION: 6, REQUEST_TIMED_OUT: 7, COORDINATOR_LOAD_IN_PROGRESS: 14, NOT_COORDINATOR: 16, REBALANCE_IN_PROGRESS: 27 } as const;

describe('Kafka brokers down and back, and brokers answering with errors', () => {
  let fx: KafkaFixture;
  let drainId: string;
  const workers: LogdrainProcess[] = [];

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 3, brokers: BROKERS });
    drainId = await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'brokers', type: 'http', endpoint: `${fx.receiver.url}/brokers`, format: 'ndjson' });
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  /** The broker leading the partition that org_acme's records (keyed by orgId) land on. */
  async function leaderOfStream(): Promise<number> {
    const admin = new Kafka({ clientId: 'test-admin', brokers: fx.broker.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(fx.topic);
      const used = offsets.find((o) => o.high !== '0');
      const meta = await admin.fetchTopicMetadata({ topics: [fx.topic] });
      const partition = meta.topics[0]!.partitions.find((p) => p.partitionId === used?.partition);
      return partition!.leader;
    } finally {
      await admin.disconnect();
    }
  }

  it('keeps the worker running and loses no record', async () => {
    const env = { ...fx.workerEnv, HEARTBEAT_INTERVAL_MS: '0' };
    const worker = spawnLogdrain(['worker'], env);
    workers.push(worker);
    dumpLogOnFailure(worker);
    await worker.waitForEvent('kafka.joined', 30_000);

    const producer = await fx.producer();
    const total = 3000;
    const producing = produceStream(producer, fx.topic, {
      count: total, orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }], idPrefix: 'brk', chunk: 60, pauseMs: 250,
    });
    const received = () => fx.receivedIds('/brokers').size;
    await waitFor(() => received() >= 300, { what: 'the stream to start arriving', timeoutMs: 20_000 });

    // 1. The leader of the consumed partition goes down for a while, then returns.
    const leader = await leaderOfStream();
    await fx.broker.setBrokerDown(leader);
    await sleep(2500);
    await fx.broker.setBrokerUp(leader);
    const afterLeader = received();

    // 2. The whole cluster goes down at once, then returns.
    for (let id = 1; id <= BROKERS; id++) await fx.broker.setBrokerDown(id);
    await sleep(2000);
    for (let id = 1; id <= BROKERS; id++) await fx.broker.setBrokerUp(id);
    await waitFor(() => received() > afterLeader + 200, { what: 'delivery to resume after the outage', timeoutMs: 30_000 });

    // 3. Requests answered with errors: fetches, commits, heartbeats, and the rejoin they cause.
    // Counts are kept small on purpose: against this mock, kafkajs takes about ten seconds per
    // failed fetch to recover (five NOT_LEADER answers in a row stall it for 40 to 60 s; a plain
    // kafkajs consumer, without logdrain, does the same).
    await fx.broker.pushRequestErrors(API.Fetch, ERR.NOT_LEADER_FOR_PARTITION, 1);
    await fx.broker.pushRequestErrors(API.Fetch, ERR.REQUEST_TIMED_OUT, 2);
    await fx.broker.pushRequestErrors(API.OffsetCommit, ERR.REBALANCE_IN_PROGRESS, 3);
    await fx.broker.pushRequestErrors(API.OffsetCommit, ERR.NOT_COORDINATOR, 2);
    await fx.broker.pushRequestErrors(API.Heartbeat, ERR.REBALANCE_IN_PROGRESS, 2);
    await fx.broker.pushRequestErrors(API.JoinGroup, ERR.COORDINATOR_LOAD_IN_PROGRESS, 2);

    const ids = await producing;
    expect(ids).toHaveLength(total);
    const [report] = await expectLedgersBalanced(fx, [{ drainId, path: '/brokers', produced: ids }], 'broker', 45_000);
    expect(report!.droppedByReason).toEqual({});
    await expectDeliveryRecordsAgree(fx, { drainId, path: '/brokers', produced: ids });

    // The worker lived through all of it (a crash would have ended the process).
    expect(worker.child.exitCode).toBeNull();
    const kafkaEvents = worker.lines.map((l) => String(l.event)).filter((e) => e.startsWith('kafka.'));
    console.info(`broker: leader ${leader} down 2.5 s, cluster down 2 s, injected errors; worker kafka events: ${JSON.stringify(countOf(kafkaEvents))}`);
    await expectGracefulStop(worker);
  }, 120_000);

  // A broker answer kafkajs does not retry (INVALID_REQUEST) crashes its consumer without a restart;
  // the worker replaces the consumer a second later. A SIGTERM in that second found no runner to
  // pause, the stop failed and the worker exited 1 (seen in CI during a rebalance).
  it('stops with exit 0 when a SIGTERM lands while a crashed consumer is being replaced', async () => {
    const worker = spawnLogdrain(['worker'], fx.workerEnv);
    workers.push(worker);
    dumpLogOnFailure(worker);
    await worker.waitForEvent('kafka.joined', 30_000);
    await fx.broker.pushRequestErrors(API.Fetch, ERR.INVALID_REQUEST, 1);
    // The injected error's crash (kafkajs's INVALID_REQUEST message): the mock broker sometimes
    // answers the first join with GROUP_LOAD_IN_PROGRESS, a crash kafkajs restarts from itself.
    const crash = await worker.waitForEvent('kafka.crash', 30_000, (l) => String(l.err).includes('request being malformed'));
    expect(crash.restart).toBe(false);
    await expectGracefulStop(worker);
    expect(worker.lines.map((l) => l.event)).not.toContain('process.stop_failed');
  }, 60_000);
});

function countOf(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
