/**
 * Per-drain concurrency: each drain sends at most `concurrency` requests at
 * once, and its batches waiting for a slot queue in submission order. A
 * queued batch can be taken back (withdraw) until its slot comes: a drain
 * that starts spilling parks its unsent batches instead (backlog/park-unsent.ts).
 * A queued batch counts in flight from its submission until it is accounted,
 * which may be after its slot is free again.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import type { ReadyBatch } from '../batch/batcher.js';

/** Sends a batch in its slot; `accounted`, when answered, resolves once what happened to it is durable. */
export type Send = (batch: ReadyBatch) => Promise<{ accounted: Promise<void> } | void>;

export interface Lanes {
  /** Runs `send` once the batch's drain has a free slot, unless it was withdrawn first; resolves once accounted. */
  queue(batch: ReadyBatch, send: Send): Promise<void>;
  /** Runs `task` in one of the drain's slots; it cannot be withdrawn. */
  run<T>(drainId: string, task: () => Promise<T>): Promise<T>;
  /** Takes back the drain's queued batches, in submission order: they will not be sent. */
  withdraw(drainId: string): ReadyBatch[];
  /** Resolves when every queued batch has finished. */
  idle(): Promise<void>;
  /** Queued batches not yet finished. */
  readonly inFlight: number;
  /** The drain's queued batches still waiting for a slot (none: a task run now takes a free slot or the next one). */
  waiting(drainId: string): number;
}

export function createLanes(concurrency: number): Lanes {
  const limits = new Map<string, LimitFunction>();
  /** Queued batches waiting for their drain's slot, by drain, in submission order. */
  const waiting = new Map<string, Set<ReadyBatch>>();
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const limitFor = (drainId: string): LimitFunction => {
    let l = limits.get(drainId);
    if (!l) limits.set(drainId, (l = pLimit(concurrency)));
    return l;
  };

  return {
    queue(batch, send) {
      inFlight++;
      const drainId = batch.plan.drain.id;
      let queue = waiting.get(drainId);
      if (queue === undefined) waiting.set(drainId, (queue = new Set()));
      queue.add(batch);
      const started = () => {
        const q = waiting.get(drainId);
        // Gone from the queue: withdrawn, not to be sent.
        if (q === undefined || !q.delete(batch)) return undefined;
        if (q.size === 0) waiting.delete(drainId);
        return send(batch);
      };
      return limitFor(drainId)(started).then((done) => done?.accounted).finally(() => {
        inFlight--;
        if (inFlight === 0) {
          const w = idleWaiters;
          idleWaiters = [];
          for (const resolve of w) resolve();
        }
      });
    },
    run: (drainId, task) => limitFor(drainId)(task),
    withdraw(drainId) {
      const queue = waiting.get(drainId);
      if (queue === undefined) return [];
      waiting.delete(drainId);
      return [...queue];
    },
    waiting: (drainId) => waiting.get(drainId)?.size ?? 0,
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    get inFlight() {
      return inFlight;
    },
  };
}
