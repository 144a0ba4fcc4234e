/**
 * The embedded source: polls the store's ingest queue table (no Kafka). One
 * consumer, one "partition"; the committed cursor plays the offset.
 */
import { OffsetTracker } from './offset-tracker.js';
import { nextTurn } from '../event-loop.js';
import type { ChunkHandler, RecordSource } from './source.js';
import type { QueueRepo } from '../store/queue-repo.js';
import type { Logger } from '../telemetry/logger.js';

/** While at the in-flight cap: how often to tell the worker again. */
const CAPACITY_RECHECK_MS = 200;

/** Payload characters of a read routed in one step (at least one record). */
export const ROUTE_PIECE_CHARS = 256 * 1024;

/** The end of the piece of `messages` starting at `from`: records up to ROUTE_PIECE_CHARS of payload, at least one. */
function pieceEnd(messages: readonly { payload: string }[], from: number): number {
  let chars = messages[from]!.payload.length;
  let to = from + 1;
  while (to < messages.length && chars + messages[to]!.payload.length <= ROUTE_PIECE_CHARS) chars += messages[to++]!.payload.length;
  return to;
}

export interface EmbeddedQueueSourceOptions {
  queue: QueueRepo;
  consumer?: string;
  pollIntervalMs?: number;
  chunkSize?: number;
  maxInFlightRecords: number;
  logger: Logger;
  /** Called when consumption stops at maxInFlightRecords (see the Kafka source). */
  onCapacityReached?: () => void;
  /**
   * Awaited after a chunk is read and before it is routed: the worker brings
   * its drain plans up to date here, so a record accepted after a drain change
   * was answered is routed by that change. While it fails the chunk is read
   * again later, never routed without it.
   */
  beforeChunk?: () => Promise<unknown>;
}

export function createEmbeddedQueueSource(opts: EmbeddedQueueSourceOptions): RecordSource {
  const consumerName = opts.consumer ?? 'embedded';
  const pollMs = opts.pollIntervalMs ?? 100;
  const chunkSize = opts.chunkSize ?? 1000;
  let committable: number | undefined;
  const tracker = new OffsetTracker({
    maxInFlightRecords: opts.maxInFlightRecords,
    onCommittable: (_p, next) => {
      committable = Number(next);
    },
  });
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function commit(): Promise<void> {
    if (committable === undefined) return;
    const seq = committable;
    committable = undefined;
    try {
      await opts.queue.commit(consumerName, seq);
    } catch (e) {
      committable = Math.max(committable ?? 0, seq);
      opts.logger.warn({ event: 'queue.commit_failed', err: (e as Error).message }, 'queue cursor commit failed');
    }
  }

  async function run(handler: ChunkHandler): Promise<void> {
    // An enqueue its process did not finish is dropped (its request was never answered 202).
    await opts.queue.discardPending();
    let position = await opts.queue.cursor(consumerName);
    while (running) {
      // The embedded store answers through promise callbacks only: without a turn here, reading
      // and routing a backlog would keep the API's sockets unread until it ran out.
      await nextTurn();
      while (tracker.inFlightRecords >= opts.maxInFlightRecords && running) {
        opts.onCapacityReached?.();
        await tracker.waitForCapacityAtMost(CAPACITY_RECHECK_MS);
      }
      await commit();
      let messages: Awaited<ReturnType<QueueRepo['readAfter']>> = [];
      try {
        messages = await opts.queue.readAfter(position, chunkSize);
      } catch (e) {
        opts.logger.warn({ event: 'queue.read_failed', err: (e as Error).message }, 'queue read failed');
      }
      if (messages.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, pollMs);
        });
        continue;
      }
      if (opts.beforeChunk) {
        try {
          await opts.beforeChunk();
        } catch (e) {
          opts.logger.warn({ event: 'queue.before_chunk_failed', err: (e as Error).message }, 'drain configuration check failed: the chunk waits');
          await new Promise((r) => setTimeout(r, pollMs));
          continue;
        }
      }
      // Routed a piece at a time, a turn between pieces: the embedded worker shares the API's thread,
      // and a read of large records (1 MiB of them) routed in one step held that thread for a
      // read's whole routing.
      for (let from = 0; from < messages.length;) {
        const to = pieceEnd(messages, from);
        if (from > 0) await nextTurn();
        position = messages[to - 1]!.seq;
        const ticket = tracker.open(0, String(position), to - from);
        handler({ messages: messages.slice(from, to).map((m) => m.payload), ticket });
        ticket.seal();
        from = to;
      }
    }
  }

  return {
    name: 'embedded',
    ready: () => running,
    inFlightRecords: () => tracker.inFlightRecords,
    async start(handler) {
      running = true;
      loop = run(handler);
      loop.catch((e) => opts.logger.error({ event: 'queue.crash', err: (e as Error).message }, 'queue loop crashed'));
    },
    async stop(deadline, idle) {
      running = false;
      wake?.();
      await loop?.catch(() => {});
      await Promise.race([
        tracker.drained(),
        ...(idle ? [idle] : []),
        new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()))),
      ]);
      await commit();
    },
  };
}
