/**
 * The live feed of the latency and paused-drain runs, in a process of its own: the receiver lives
 * in the harness process, and a feed of 20,000 records a second sharing its event loop delayed
 * every 2xx by seconds (the first POSTs of a latency run took 3.5 s), so the run measured the
 * harness rather than the worker.
 *
 * FEED_RATE records a second for FEED_SECONDS, in ticks of 10 ms, to KAFKA_TOPIC (partitions
 * round-robin over FEED_PARTITIONS), from syntheticRecords(FEED_COUNT, FEED_DATA); each record is
 * stamped with the time it is sent, so arrival minus timestamp is Kafka append to 2xx. Ends with
 * one JSON line: {fed, stalledTicks, behindMs}.
 */
import { Kafka, logLevel } from 'kafkajs';
import { syntheticRecords, type SyntheticOptions } from '../../../src/devtools/synthetic.js';
import { requiredEnv } from './runner-kit.js';

const rate = Number(requiredEnv('FEED_RATE'));
const seconds = Number(requiredEnv('FEED_SECONDS'));
const partitions = Number(requiredEnv('FEED_PARTITIONS'));
const topic = requiredEnv('KAFKA_TOPIC');
/**
 * Partitions one tick's records go to (FEED_SPREAD, default 4), moving on each tick: a producer
 * sends a partition's records together, as kafkajs and librdkafka batch them. Spread over every
 * partition, each tick made message sets of four records, and the mock broker answers a fetch with
 * one message set a partition, so the consumer needed a fetch per hundred records.
 */
const spread = Math.min(partitions, Number(process.env.FEED_SPREAD ?? 4));
const records = syntheticRecords(Number(requiredEnv('FEED_COUNT')), JSON.parse(requiredEnv('FEED_DATA')) as SyntheticOptions);

const kafka = new Kafka({ clientId: 'bench-feed', brokers: requiredEnv('KAFKA_BROKERS').split(','), logLevel: logLevel.NOTHING });
const producer = kafka.producer({ allowAutoTopicCreation: false });
await producer.connect();

const perTick = rate / 100;
const t0 = Date.now();
// Sends are not awaited one by one: on a loaded machine one send can take longer than a tick, and
// a feed waiting on each fell to a quarter of its rate. A bounded number of sends stay
// outstanding; a tick that finds them all busy waits (and says so at the end).
const outstanding = new Set<Promise<unknown>>();
let stalledTicks = 0;
let fed = 0;
for (let tick = 0; tick < seconds * 100; tick++) {
  const msgs = [];
  for (let i = 0; i < perTick; i++) {
    const next = records.next();
    if (next.done) break;
    const r = next.value;
    r.timestamp = new Date().toISOString();
    msgs.push({ key: r.orgId, partition: (tick * spread + (i % spread)) % partitions, value: JSON.stringify(r) });
  }
  if (msgs.length === 0) break;
  fed += msgs.length;
  const sent: Promise<unknown> = producer.send({ topic, acks: 1, messages: msgs }).finally(() => outstanding.delete(sent));
  outstanding.add(sent);
  if (outstanding.size >= 64) {
    stalledTicks++;
    await Promise.race(outstanding);
  }
  const wait = t0 + (tick + 1) * 10 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
await Promise.all(outstanding);
await producer.disconnect();
process.stdout.write(`${JSON.stringify({ fed, stalledTicks, behindMs: Date.now() - t0 - seconds * 1000 })}\n`);
