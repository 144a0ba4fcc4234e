/**
 * The Kafka source: one member of the worker pool's consumer group (kafkajs).
 * Offsets are never committed automatically: a partition's position is
 * committed only once the OffsetTracker reports its records accounted for.
 */
// Before kafkajs: its record decoder and consumer batch are replaced as kafkajs first loads them
// (kafka-record-decoder.ts, kafka-batch.ts).
import './kafka-record-decoder.js';
import './kafka-batch.js';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { OffsetTracker } from './offset-tracker.js';
import type { ChunkHandler, RecordSource } from './source.js';
import type { Logger } from '../telemetry/logger.js';

/**
 * How long a fetch waits on the broker for records to arrive, unless configured
 * (KAFKA_FETCH_MAX_WAIT_MS). A leave waits out the poll under way, so a short poll (kafkajs'
 * default is 5 s) keeps a stop quick; Kafka answers as soon as records arrive whatever it is.
 */
const DEFAULT_FETCH_MAX_WAIT_MS = 50;
/** While at the in-flight cap: how often to heartbeat and tell the worker again. */
const CAPACITY_RECHECK_MS = 200;
/** kafkajs's defaults are 10 MB and 1 MB: halving and quartering them cut the worker's peak RSS by about 30 MB at no cost in throughput (bench:e2e). */
const FETCH_MAX_BYTES = 4 * 1024 * 1024;
const FETCH_MAX_BYTES_PER_PARTITION = 512 * 1024;
/**
 * The most the final commit and the group leave may take. kafkajs (2.2.4) cannot be stopped
 * in the middle of a rejoin: a member caught in the rebalance that another member's leaving
 * started (a whole pool stopped at once) waits for the JoinGroup the broker holds until the
 * rebalance timeout, 30 s by default, so its disconnect overran the stop limit. Past these
 * bounds the worker stops without a clean leave: the group drops it after its session
 * timeout, and a commit that did not land only means the next owner re-reads (at least once).
 */
const COMMIT_TIMEOUT_MS = 3000;
/** A leave waits out the fetch under way (at most the fetch's max wait) and then the LeaveGroup. */
const LEAVE_MARGIN_MS = 2000;
/** However late the stop, the final commit gets this long: normally it takes milliseconds. */
const MIN_COMMIT_MS = 500;

export interface KafkaSourceOptions {
  brokers: readonly string[];
  topic: string;
  groupId: string;
  clientId?: string;
  maxInFlightRecords: number;
  /**
   * Called when consumption stops at maxInFlightRecords: records held in open
   * batches count as in flight, and lingering them while nothing new can be
   * read only stalls the stream (the worker flushes every open batch).
   */
  onCapacityReached?: () => void;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  fetchMaxWaitMs?: number;
  commitIntervalMs?: number;
  logger: Logger;
  /** Consumer lag per partition this member is assigned, reported after each fetched batch. */
  onLag?: (partition: number, lag: number) => void;
  /** The partitions this member reads, after each group join. */
  onAssigned?: (partitions: number[]) => void;
  /**
   * Awaited after a batch is fetched and before it is routed (the worker brings its drain plans up
   * to date). While it fails the batch waits, heartbeating: records are never routed without it.
   */
  beforeChunk?: () => Promise<unknown>;
}

/** While the check before routing fails (the store down): how long to wait before trying again. */
const BEFORE_CHUNK_RETRY_MS = 500;

export function createKafkaSource(opts: KafkaSourceOptions): RecordSource {
  const fetchMaxWaitMs = opts.fetchMaxWaitMs ?? DEFAULT_FETCH_MAX_WAIT_MS;
  const leaveTimeoutMs = fetchMaxWaitMs + LEAVE_MARGIN_MS;
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
      maxWaitTimeInMs: fetchMaxWaitMs,
      // What one fetch may bring: with the in-flight cap, fetched data waiting to be routed is most of a worker's memory.
      maxBytes: FETCH_MAX_BYTES,
      maxBytesPerPartition: FETCH_MAX_BYTES_PER_PARTITION,
      allowAutoTopicCreation: false,
    });
    c.on(c.events.GROUP_JOIN, (e) => {
      joined = true;
      const partitions = e.payload.memberAssignment[opts.topic] ?? [];
      assigned = new Set(partitions);
      opts.logger.info({ event: 'kafka.joined', partitions }, 'joined the consumer group');
      opts.onAssigned?.(partitions);
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
  let assigned = new Set<number>();
  let stopping = false;
  let commitTimer: NodeJS.Timeout | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  let handler: ChunkHandler | undefined;
  let consumer: Consumer = newConsumer();

  function scheduleRestart(): void {
    if (restartTimer) return;
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      restarting = (async () => {
        await consumer.disconnect().catch(() => {});
        if (stopping || !handler) return;
        consumer = newConsumer();
        try {
          await run(handler);
          opts.logger.info({ event: 'kafka.restarted' }, 'kafka consumer restarted');
        } catch (e) {
          opts.logger.error({ event: 'kafka.restart_failed', err: (e as Error).message }, 'kafka consumer restart failed');
          if (!stopping) scheduleRestart();
        }
      })().finally(() => (restarting = undefined));
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
          opts.onCapacityReached?.();
          await tracker.waitForCapacityAtMost(CAPACITY_RECHECK_MS);
          await heartbeat();
        }
        // `stopping`: kafkajs may restart a crashed runner after stop() paused the one before it.
        const abandoned = () => stopping || !isRunning() || isStale();
        if (abandoned() || batch.messages.length === 0) return;
        if (opts.beforeChunk) {
          // Returning without resolving an offset leaves the batch to be fetched again (at least once).
          if (!(await untilSucceeds(opts.beforeChunk, abandoned, heartbeat, opts.logger))) return;
        }
        const last = batch.lastOffset();
        const ticket = tracker.open(batch.partition, (BigInt(last) + 1n).toString(), batch.messages.length);
        h({ messages: batch.messages.map((m) => m.value), ticket });
        ticket.seal();
        resolveOffset(last);
        // A batch fetched before a rebalance can finish after it: no figure for a partition now read elsewhere.
        if (assigned.has(batch.partition)) opts.onLag?.(batch.partition, Number(BigInt(batch.highWatermark) - BigInt(last) - 1n));
        await heartbeat();
      },
    });
  }

  /**
   * Pause rather than stop: kafkajs drops commits once its runner has stopped, and the final
   * commit of what in-flight batches settle must still go through. A consumer between a crash
   * and its restart has no runner to pause (kafkajs throws); nothing is fetched then anyway.
   */
  function pauseFetching(): void {
    try {
      consumer.pause([{ topic: opts.topic }]);
    } catch (e) {
      opts.logger.debug({ event: 'kafka.pause_skipped', err: (e as Error).message }, 'consumer not running at stop');
    }
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
      if (restartTimer) clearTimeout(restartTimer);
      // A stop can land while a crashed consumer is being replaced: let the replacement finish
      // joining (bounded) so it is the one paused, committed and disconnected below.
      if (restarting) await settlesWithin(restarting, Math.min(leaveTimeoutMs, deadline - Date.now()));
      pauseFetching();
      await settlesWithin(Promise.race([tracker.drained(), ...(idle ? [idle] : [])]), deadline - Date.now());
      if (commitTimer) clearInterval(commitTimer);
      const left = () => Math.max(0, deadline - Date.now());
      if (!(await settlesWithin(commitPending(), Math.max(MIN_COMMIT_MS, Math.min(COMMIT_TIMEOUT_MS, left()))))) {
        opts.logger.warn({ event: 'kafka.commit_timeout' }, 'final offset commit did not complete (group rebalancing): the next owner re-reads those records');
      }
      if (!(await settlesWithin(consumer.disconnect(), Math.min(leaveTimeoutMs, left())))) {
        opts.logger.warn({ event: 'kafka.leave_timeout' }, 'left without a clean group leave (group rebalancing): the group drops this member after its session timeout');
      }
    },
  };
}

/** Calls `check` until it succeeds (true) or `abandoned` says to give up (false), heartbeating between tries. */
async function untilSucceeds(check: () => Promise<unknown>, abandoned: () => boolean, heartbeat: () => Promise<void>, logger: Logger): Promise<boolean> {
  for (;;) {
    try {
      await check();
      return !abandoned();
    } catch (e) {
      logger.warn({ event: 'kafka.before_chunk_failed', err: (e as Error).message }, 'drain configuration check failed: the batch waits');
      await new Promise((r) => setTimeout(r, BEFORE_CHUNK_RETRY_MS));
      if (abandoned()) return false;
      await heartbeat().catch(() => {});
    }
  }
}

/** Waits for `work` (its failure included) at most `ms`; false when the time ran out first. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))));
  try {
    return await Promise.race([work.then(() => true, () => true), timeUp]);
  } finally {
    clearTimeout(timer);
  }
}
