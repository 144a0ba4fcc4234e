/**
 * Stopping a whole worker pool at once (what `docker compose stop` or a
 * scale-down does): every member of the consumer group gets SIGTERM at the
 * same instant, in the middle of a stream with deliveries in flight, so each
 * one's leaving starts a rebalance the others are caught in. Each must still
 * exit 0 within SHUTDOWN_TIMEOUT_MS (CONTRACT part 1). Nothing is lost, and
 * nothing below the offsets the group had committed is delivered twice: a
 * final commit the rebalance refused only means re-reading (at least once).
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, produceStream, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';

const SHUTDOWN_TIMEOUT_MS = 8_000;
// Longer than the stop limit on purpose: a stop that waits on the group's rebalance
// (bounded only by the rebalance timeout, which is the session timeout) cannot finish in time.
const SESSION_TIMEOUT_MS = 12_000;
const PARTITIONS = 6;

/** Commits `offsets` for a new, empty consumer group (the mock broker has no DescribeGroups, so no admin.setOffsets). */
async function commitAsGroup(fx: KafkaFixture, groupId: string, offsets: { partition: number; offset: string }[]): Promise<void> {
  const consumer = new Kafka({ clientId: 'test-committer', brokers: fx.broker.brokers, logLevel: logLevel.NOTHING })
    .consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 500 });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.connect();
  await consumer.subscribe({ topics: [fx.topic] });
  // Reads nothing for itself: no offset is resolved, nothing but the given offsets is committed.
  await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => {} });
  await joined;
  await consumer.commitOffsets(offsets.map((o) => ({ topic: fx.topic, partition: o.partition, offset: o.offset })));
  await consumer.disconnect();
}

describe('a pool of workers stopped together', () => {
  let fx: KafkaFixture;
  const workers: LogdrainProcess[] = [];

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: PARTITIONS });
    await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'pool', type: 'http', endpoint: `${fx.receiver.url}/pool`, format: 'ndjson' });
    // A slow destination: every batch is in flight for 300 ms.
    fx.answerSlowly(300);
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('every worker exits 0 within SHUTDOWN_TIMEOUT_MS; nothing is lost and nothing committed is sent again', async () => {
    const env: Record<string, string> = {
      ...fx.workerEnv,
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      KAFKA_HEARTBEAT_INTERVAL_MS: '500',
    };
    const pool = [0, 1, 2].map(() => spawnLogdrain(['worker'], env));
    workers.push(...pool);
    // All three members hold partitions: the group has settled.
    await waitFor(
      () => {
        const owned = pool.map((w) => (w.lines.filter((l) => l.event === 'kafka.joined').at(-1)?.partitions as number[] | undefined) ?? []);
        return owned.every((p) => p.length > 0) && new Set(owned.flat()).size === PARTITIONS && owned.flat().length === PARTITIONS;
      },
      // Three joins are three rebalances; on a loaded machine the mock broker can take a minute over them.
      { what: 'three members sharing the partitions', timeoutMs: 100_000, intervalMs: 200 },
    );
    const producer = await fx.producer();
    // The second half of the stream is produced only once the stop has been sent: the stop comes
    // mid-stream however slowly a loaded machine (the whole suite in parallel) delivers the first
    // records. With 2,000 records before the gate, 400 delivered is reached before it.
    const total = 4000;
    let stopSent!: () => void;
    const gate = { at: 2000, open: new Promise<void>((resolve) => (stopSent = resolve)) };
    // One organization, one record key: every record goes to one partition, in order, so a
    // record's offset is its place in the stream.
    const producing = produceStream(producer, fx.topic, {
      count: total, orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }], idPrefix: 'pool', chunk: 50, pauseMs: 100, gate,
    });
    await waitFor(() => fx.receivedIds('/pool').size >= 400, { what: 'records delivered before the stop', timeoutMs: 60_000, intervalMs: 100 });
    for (const w of pool) w.kill('SIGTERM');
    stopSent();
    const exits = await Promise.all(pool.map((w) => w.exited));

    for (const [i, w] of pool.entries()) {
      expect(exits[i], `worker ${i} exit`).toEqual({ code: 0, signal: null });
      // The process's own clock: from the signal to the end of its stop, within the limit.
      const stopping = w.lines.find((l) => l.event === 'process.stopping');
      const stopped = w.lines.find((l) => l.event === 'worker.stopped');
      expect(stopped, `worker ${i} logged worker.stopped`).toBeDefined();
      const took = Date.parse(stopped!.time as string) - Date.parse(stopping!.time as string);
      expect(took, `worker ${i} stop took ${took} ms`).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      // No error while stopping (joining can log kafka.crash: the mock broker sometimes refuses a SyncGroup).
      const stopLines = w.lines.slice(w.lines.indexOf(stopping!));
      expect(stopLines.filter((l) => (l.level as number) >= 50).map((l) => JSON.stringify(l)), `worker ${i} errors while stopping`).toEqual([]);
    }

    // What the group had committed when the pool was gone.
    const admin = new Kafka({ clientId: 'test-admin', brokers: fx.broker.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const [committed] = await admin.fetchOffsets({ groupId: env.KAFKA_GROUP_ID!, topics: [fx.topic] });
    // The next owner resumes from exactly those offsets. It gets a group of its own holding them:
    // the pool's group still lists the members whose leave the rebalance cut short until their
    // sessions time out, and waiting that out here would only make the test slow.
    const nextGroup = `${env.KAFKA_GROUP_ID}-next`;
    await commitAsGroup(fx, nextGroup, committed!.partitions.filter((p) => Number(p.offset) >= 0));
    const ids = await producing;
    const ends = await admin.fetchTopicOffsets(fx.topic);
    await admin.disconnect();
    const streamPartition = ends.find((e) => Number(e.high) === total)!.partition;
    const committedOffset = Math.max(0, Number(committed!.partitions.find((p) => p.partition === streamPartition)!.offset));
    const receivedBefore = fx.receivedIds('/pool');

    // A fresh worker takes over from the committed offsets and delivers the rest.
    const next = spawnLogdrain(['worker'], { ...env, KAFKA_GROUP_ID: nextGroup });
    workers.push(next);
    await waitFor(() => fx.receivedIds('/pool').size >= total, { what: 'every record', timeoutMs: 60_000, intervalMs: 250 });
    const received = fx.receivedIds('/pool');
    expect(ids.filter((id) => !received.has(id))).toEqual([]);
    const twice = ids.map((id, offset) => ({ id, offset, n: received.get(id)! })).filter((r) => r.n > 1);
    expect(twice.filter((r) => r.offset < committedOffset), `sent again below committed offset ${committedOffset}`).toEqual([]);
    // Re-sent records were delivered before the stop and not yet committed: at least once, never more than that.
    expect(twice.filter((r) => !receivedBefore.has(r.id))).toEqual([]);
    console.info(`pool stop: stops took ${pool.map((w) => {
      const t = (e: string) => Date.parse(w.lines.find((l) => l.event === e)!.time as string);
      return t('worker.stopped') - t('process.stopping');
    }).join(', ')} ms; committed offset ${committedOffset} of ${receivedBefore.size} delivered before the stop; ${twice.length} re-sent after it`);
    next.kill('SIGTERM');
    expect((await next.exited).code).toBe(0);
  }, 180_000);
});
