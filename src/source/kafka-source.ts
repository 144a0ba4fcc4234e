/**
 * The Kafka source: one member of the worker pool's consumer group (kafkajs).
 * Offsets are never committed automatically: a partition's position is
 * committed only once the OffsetTracker reports its records accounted for.
 */
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { OffsetTracker } from './offset-tracker.js';
import type { ChunkHandler, RecordSource } from './source.js';
import type { Logger } from '../telemetry/logger.js';

export interface KafkaSourceOptions {
  brokers: readonly string[];
  topic: string;
  groupId: string;
  clientId?: string;
  maxInFlightRecords: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  commitIntervalMs?: number;
  logger: Logger;
  /** Consumer lag per partition, reported after each fetched batch. */
  onLag?: (partition: number, lag: number) => void;
}

export function createKafkaSource(opts: KafkaSourceOptions): RecordSource {
  const kafka = new Kafka({
    clientId: opts.clientId ?? 'logdrain-worker',
    brokers: [...opts.brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 5000 },
  });
  const newConsumer = (): Consumer => {
    const c = kafka.consumer({
      groupId: opts.groupId,
      sessionTimeout: opts.sessionTimeoutMs ?? 30_000,
      rebalanceTimeout: opts.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: opts.heartbeatIntervalMs ?? 3000,
      allowAutoTopicCreation: false,
    });
    c.on(c.events.GROUP_JOIN, (e) => {
      joined = true;
      const assigned = Object.values(e.payload.memberAssignment).flat();
      opts.logger.info({ event: 'kafka.joined', partitions: assigned }, 'joined the consumer group');
    });
    c.on(c.events.CRASH, (e) => {
      joined = false;
      const err = e.payload.error as Error & { type?: string; code?: number };
      opts.logger.error({ event: 'kafka.crash', err: err?.message, type: err?.type, restart: e.payload.restart }, 'kafka consumer crashed');
      // kafkajs restarts itself after retriable errors only. After any other (a broker answering
      // INVALID_REQUEST to a SyncGroup, say), rejoin with a fresh consumer rather than idle as a zombie.
      if (!e.payload.restart && !stopping) scheduleRestart();
    });
    return c;
  };
  const pending = new Map<number, string>();
  const tracker = new OffsetTracker({
    maxInFlightRecords: opts.maxInFlightRecords,
    onCommittable: (partition, next) => pending.set(partition, next),
  });
  let joined = false;
  let stopping = false;
  let commitTimer: NodeJS.Timeout | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let handler: ChunkHandler | undefined;
  let consumer: Consumer = newConsumer();

  function scheduleRestart(): void {
    if (restartTimer) return;
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      void (async () => {
        await consumer.disconnect().catch(() => {});
        if (stopping || !handler) return;
        consumer = newConsumer();
        try {
          await run(handler);
          opts.logger.info({ event: 'kafka.restarted' }, 'kafka consumer restarted');
        } catch (e) {
          opts.logger.error({ event: 'kafka.restart_failed', err: (e as Error).message }, 'kafka consumer restart failed');
          scheduleRestart();
        }
      })();
    }, 1000);
  }

  async function run(h: ChunkHandler): Promise<void> {
    await consumer.connect();
    await consumer.subscribe({ topics: [opts.topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 4,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        while (tracker.inFlightRecords >= opts.maxInFlightRecords && isRunning() && !isStale()) {
          await Promise.race([tracker.waitForCapacity(), new Promise((r) => setTimeout(r, 1000))]);
          await heartbeat();
        }
        if (!isRunning() || isStale() || batch.messages.length === 0) return;
        const last = batch.lastOffset();
        const ticket = tracker.open(batch.partition, (BigInt(last) + 1n).toString(), batch.messages.length);
        h({ messages: batch.messages.map((m) => m.value), ticket });
        ticket.seal();
        resolveOffset(last);
        opts.onLag?.(batch.partition, Number(BigInt(batch.highWatermark) - BigInt(last) - 1n));
        await heartbeat();
      },
    });
  }

  async function commitPending(): Promise<void> {
    if (pending.size === 0) return;
    const offsets = [...pending].map(([partition, offset]) => ({ topic: opts.topic, partition, offset }));
    pending.clear();
    try {
      await consumer.commitOffsets(offsets);
    } catch (e) {
      // A commit refused in a rebalance only means re-reading: at least once, never loss.
      opts.logger.warn({ event: 'kafka.commit_failed', err: (e as Error).message }, 'offset commit failed');
    }
  }

  return {
    name: 'kafka',
    ready: () => joined && !stopping,
    inFlightRecords: () => tracker.inFlightRecords,
    async start(h: ChunkHandler) {
      handler = h;
      commitTimer = setInterval(() => void commitPending(), opts.commitIntervalMs ?? 200);
      await run(h);
    },
    async stop(deadline: number, idle?: Promise<void>) {
      stopping = true;
      // Pause rather than stop: kafkajs drops commits once its runner has stopped, and the
      // final commit of what in-flight batches settle must still go through.
      consumer.pause([{ topic: opts.topic }]);
      await Promise.race([
        tracker.drained(),
        ...(idle ? [idle] : []),
        new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()))),
      ]);
      if (commitTimer) clearInterval(commitTimer);
      if (restartTimer) clearTimeout(restartTimer);
      await commitPending();
      await consumer.disconnect().catch(() => {});
    },
  };
}
