/**
 * The mock Kafka broker (librdkafka mock cluster) speaks enough of the protocol
 * for kafkajs: produce, consumer groups, committed offsets, broker outages.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, Partitioners, type Consumer, type Producer, type Admin, type KafkaMessage, type EachBatchPayload } from 'kafkajs';
import { startMockBroker, type MockBroker } from '../helpers/broker.js';

const uid = () => randomBytes(4).toString('hex');

function kafkaFor(broker: MockBroker, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: broker.brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 5000,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 },
  });
}

function newProducer(kafka: Kafka): Producer {
  return kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 },
  });
}

function newConsumer(kafka: Kafka, groupId: string): Consumer {
  return kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: 6_000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 100,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 },
  });
}

/** Resolves on the consumer's next GROUP_JOIN. */
function groupJoined(consumer: Consumer): Promise<{ memberAssignment: Record<string, number[]> }> {
  return new Promise((resolve) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, (e) => {
      off();
      resolve(e.payload);
    });
  });
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const valueOf = (m: KafkaMessage) => m.value!.toString();

async function produceRange(producer: Producer, topic: string, from: number, to: number, chunk = 100) {
  for (let i = from; i < to; i += chunk) {
    const messages = [];
    for (let j = i; j < Math.min(i + chunk, to); j++) messages.push({ key: `key-${j % 37}`, value: `m-${j}` });
    await producer.send({ topic, acks: -1, messages });
  }
}

const range = (from: number, to: number, prefix = 'm-') => Array.from({ length: to - from }, (_, k) => `${prefix}${from + k}`);

/**
 * eachBatch handler: records values, resolves each offset, then commits the
 * resolved offsets (autoCommit with no interval/threshold commits per batch).
 */
function committingEachBatch(sink: string[], partitions?: Set<number>) {
  return async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary }: EachBatchPayload) => {
    for (const m of batch.messages) {
      sink.push(valueOf(m));
      partitions?.add(batch.partition);
      resolveOffset(m.offset);
    }
    await commitOffsetsIfNecessary();
    await heartbeat();
  };
}

/** Disconnects everything created in a test, even when it fails half-way. */
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});
function track<T extends { disconnect(): Promise<void> }>(client: T): T {
  cleanups.push(() => client.disconnect());
  return client;
}

describe('mock Kafka broker with kafkajs', () => {
  let broker: MockBroker;

  beforeAll(async () => {
    broker = await startMockBroker({ brokers: 3 });
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('produces 1000 keyed messages to 3 partitions and consumes them all in a group with eachBatch, committing offsets', async () => {
    const topic = `t-a-${uid()}`;
    const groupId = `g-a-${uid()}`;
    await broker.createTopic(topic, 3);
    const kafka = kafkaFor(broker, 'test-a');

    const producer = track(newProducer(kafka));
    await producer.connect();
    await produceRange(producer, topic, 0, 1000);

    const consumer = track(newConsumer(kafka, groupId));
    const received: string[] = [];
    const partitionsSeen = new Set<number>();
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const joined = groupJoined(consumer);
    await consumer.run({ eachBatchAutoResolve: false, eachBatch: committingEachBatch(received, partitionsSeen) });
    const { memberAssignment } = await joined;
    expect(memberAssignment[topic]?.slice().sort()).toEqual([0, 1, 2]);

    await waitFor('1000 messages', () => received.length >= 1000);
    expect(received.length).toBe(1000);
    expect(new Set(received)).toEqual(new Set(range(0, 1000)));
    expect(partitionsSeen).toEqual(new Set([0, 1, 2]));

    // Committed offsets reach each partition's high watermark.
    const admin: Admin = track(kafka.admin());
    await admin.connect();
    const high = await admin.fetchTopicOffsets(topic);
    expect(high.reduce((n, p) => n + Number(p.high), 0)).toBe(1000);
    let committed: Array<{ partition: number; offset: string }> = [];
    const deadline = Date.now() + 5000;
    for (;;) {
      const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
      committed = t!.partitions;
      const ok = high.every((h) => committed.find((c) => c.partition === h.partition)?.offset === h.high);
      if (ok || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(Object.fromEntries(committed.map((c) => [c.partition, c.offset]))).toEqual(
      Object.fromEntries(high.map((h) => [h.partition, h.high])),
    );
  });

  it('a second consumer in the same group resumes from the committed offsets', async () => {
    const topic = `t-b-${uid()}`;
    const groupId = `g-b-${uid()}`;
    await broker.createTopic(topic, 3);
    const kafka = kafkaFor(broker, 'test-b');
    const producer = track(newProducer(kafka));
    await producer.connect();
    await produceRange(producer, topic, 0, 300);

    // First consumer: reads and commits everything, then leaves.
    const first: string[] = [];
    const c1 = track(newConsumer(kafka, groupId));
    await c1.connect();
    await c1.subscribe({ topic, fromBeginning: true });
    await c1.run({ eachBatchAutoResolve: false, eachBatch: committingEachBatch(first) });
    await waitFor('first consumer to read 300', () => first.length >= 300);
    await c1.disconnect(); // commits resolved offsets and sends LeaveGroup
    expect(new Set(first)).toEqual(new Set(range(0, 300)));

    // Written while nobody is consuming.
    await produceRange(producer, topic, 300, 400);

    // Second consumer, same group, still fromBeginning: committed offsets win.
    const second: string[] = [];
    const c2 = track(newConsumer(kafka, groupId));
    await c2.connect();
    await c2.subscribe({ topic, fromBeginning: true });
    const joined = groupJoined(c2);
    await c2.run({ eachBatchAutoResolve: false, eachBatch: committingEachBatch(second) });
    await joined;
    await produceRange(producer, topic, 400, 500);

    await waitFor('second consumer to read 200 new messages', () => second.length >= 200);
    await new Promise((r) => setTimeout(r, 300)); // anything stray would show up now
    expect(second.length).toBe(200);
    expect(new Set(second)).toEqual(new Set(range(300, 500)));
  });

  it('injects request errors and reports command failures with a code', async () => {
    const topic = `t-d-${uid()}`;
    await broker.createTopic(topic, 1);
    await expect(broker.createTopic(topic, 1)).rejects.toMatchObject({ code: 'TOPIC_ALREADY_EXISTS' });
    await expect(broker.setBrokerDown(99)).rejects.toMatchObject({ code: 'BROKER_NOT_AVAILABLE' });

    const kafka = kafkaFor(broker, 'test-d');
    const producer = track(newProducer(kafka));
    await producer.connect();
    // Produce (api key 0) fails 3 times with NOT_LEADER_OR_FOLLOWER (6); kafkajs retries through it.
    await broker.pushRequestErrors(0, 6, 3);
    const t0 = Date.now();
    const [res] = await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: 'v' }] });
    expect(res).toMatchObject({ topicName: topic, partition: 0, errorCode: 0, baseOffset: '0' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100); // at least one retry back-off

    const throwaway = await startMockBroker();
    await throwaway.stop();
    await throwaway.stop(); // idempotent
    await expect(throwaway.createTopic('x', 1)).rejects.toMatchObject({ code: 'BROKER_EXITED' });
  });

  it('a retrying producer loses nothing while a partition leader is down and back up (3 brokers)', async () => {
    const topic = `t-c-${uid()}`;
    const groupId = `g-c-${uid()}`;
    const cluster = await startMockBroker({ brokers: 3, topics: [{ name: topic, partitions: 3 }] });
    cleanups.push(() => cluster.stop());
    const kafka = kafkaFor(cluster, 'test-c');

    const admin = track(kafka.admin());
    await admin.connect();
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    const leaders = meta.topics[0]!.partitions.map((p) => p.leader);
    const victim = leaders[0]!;

    const producer = track(newProducer(kafka));
    await producer.connect();

    const total = 600;
    const outageMs = 1500;
    let upAgain: Promise<void> | undefined;
    let slowest = 0;
    for (let i = 0; i < total; i += 20) {
      if (i === 200) {
        // Take the leader of partition 0 away mid-stream; leadership does not
        // move in the mock, so sends touching that partition must retry until
        // it comes back.
        await cluster.setBrokerDown(victim);
        upAgain = new Promise<void>((r) => setTimeout(r, outageMs)).then(() => cluster.setBrokerUp(victim));
      }
      const messages = range(i, i + 20).map((v, k) => ({ key: `key-${(i + k) % 37}`, value: v }));
      const t0 = Date.now();
      await producer.send({ topic, acks: -1, messages });
      slowest = Math.max(slowest, Date.now() - t0);
    }
    await upAgain;
    // Some send was held up by the outage and succeeded through retries.
    expect(slowest).toBeGreaterThan(outageMs / 2);

    const received: string[] = [];
    const consumer = track(newConsumer(kafka, groupId));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) received.push(valueOf(m));
      },
    });
    await waitFor(`${total} messages`, () => new Set(received).size >= total);
    // At least once: every message arrived (a retry may in principle duplicate one).
    expect(new Set(received)).toEqual(new Set(range(0, total)));
  });
});
