/**
 * Delivers ready batches in their drain's lanes (lanes.ts): attempts (attempt.ts, request.ts), then
 * what the retry policy decides (retry-policy.ts), accounted. A failing live batch is parked after a
 * few attempts, so a sick destination holds no partition (ARCHITECTURE invariant 2); a final failure
 * drops its records with the reason. Tickets are released once the batch's outcome is durable.
 */
import { constants as zlib } from 'node:zlib';
import type { ReadyBatch } from '../batch/batcher.js';
import type { Accountant } from '../account/accountant.js';
import { droppedEntry, parkedRecords, successEntry, type AttemptResult } from '../account/entries.js';
import { releaseAll } from '../model/ticket.js';
import { attemptBatch, type AttemptDeps } from './attempt.js';
import { retryPolicy, retryWaits } from './retry-policy.js';
import { createLanes } from './lanes.js';
import type { DrainCircuits } from './circuit.js';

/** `transport`, `events`, `logger`, `observer`: what each attempt uses (attempt.ts). */
export interface DelivererOptions extends Omit<AttemptDeps, 'level'> {
  accountant: Accountant;
  retry: { baseMs: number; maxMs: number };
  bufferHorizonMs: number;
  concurrencyPerDrain?: number;
  gzipLevel?: number;
  /** Failed attempts of a live batch before its records are parked. */
  parkAfterAttempts?: number;
  /** The drain circuits (circuit.ts): told of every batch attempt; a braked drain's live batches are parked, not sent. */
  circuits?: Pick<DrainCircuits, 'observe' | 'braked'> | undefined;
  /** Called as a failing batch's records start going to the backlog; the answer is called once they are written. */
  onParking?: (drainId: string) => () => void;
}

export interface Deliverer {
  /** A live batch: retried, then parked or dropped; tickets released once accounted. */
  submit(batch: ReadyBatch): Promise<void>;
  /** Takes back the drain's batches waiting for a slot, oldest first: unsent, their tickets the caller's to release. */
  withdrawQueued(drainId: string): ReadyBatch[];
  /** One attempt, accounted (the heartbeat's). */
  deliverOnce(batch: ReadyBatch, attempt: number): Promise<AttemptResult>;
  /** One attempt under the drain's concurrency limit, not accounted: the caller records it (the backlog pump, with the rows it unparks). */
  attemptOnce(batch: ReadyBatch, attempt: number): Promise<AttemptResult>;
  /** Resolves when every submitted batch has finished. */
  idle(): Promise<void>;
  /** Stops retrying: batches still retrying are abandoned unaccounted, to be re-read after restart. */
  abandonRetries(): void;
  /** Live batches being sent or retried now. */
  readonly inFlight: number;
  /** The drain's live batches waiting for one of its slots: a replay sends only while none waits. */
  waitingFor(drainId: string): number;
}

export function createDeliverer(opts: DelivererOptions): Deliverer {
  const deps: AttemptDeps = { ...opts, level: opts.gzipLevel ?? zlib.Z_BEST_SPEED };
  const policy = retryPolicy({ retry: opts.retry, horizonMs: opts.bufferHorizonMs, parkAfterAttempts: opts.parkAfterAttempts ?? 3 });
  const lanes = createLanes(opts.concurrencyPerDrain ?? 4);
  const waits = retryWaits();
  let abandoned = false;
  const attempt = (batch: ReadyBatch, n: number) => attemptBatch(deps, batch, n);

  /**
   * Attempts until the batch is delivered, dropped or parked. A success's accounting is returned
   * unawaited (`accounted`): holding the drain's slot through the accountant's flush (100 ms or more)
   * capped a drain at a few small batches a second, all it gets when thousands of agents make every batch small.
   */
  async function deliver(batch: ReadyBatch): Promise<{ accounted: Promise<void> } | void> {
    const firstAt = Date.now();
    const drainId = batch.plan.drain.id;
    for (let n = 1; ; n++) {
      // The drain's circuit is open: nothing is sent live, the batch waits in the backlog.
      if (batch.kind === 'batch' && opts.circuits?.braked(drainId)) return park(batch, [], 'circuit');
      let r: AttemptResult;
      try {
        r = await attempt(batch, n);
      } catch (e) {
        // Only a programming error lands here (the transport returns failures as values).
        opts.logger.error({ event: 'deliver.bug', drainId, err: (e as Error).message }, 'delivery attempt threw');
        return drop(batch, 'internal', n + 1);
      }
      const next = policy(n, r.outcome, firstAt, batch.kind);
      if (next.action === 'done') return { accounted: opts.accountant.record(successEntry(batch, r)).then(() => releaseAll(batch.tickets)) };
      if (next.action === 'drop') {
        await opts.accountant.record({ deliveries: [r.row] });
        return drop(batch, next.reason, n + 1);
      }
      if (next.action === 'park') return park(batch, [r.row], 'attempts');
      // This failure opened the drain's circuit (or another's did meanwhile): no retry, park now.
      if (batch.kind === 'batch' && opts.circuits?.braked(drainId)) return park(batch, [r.row], 'circuit');
      // The attempt row is written now, without waiting: it documents, it does not account.
      void opts.accountant.record({ deliveries: [r.row] });
      opts.logger.debug({ event: 'deliver.retry', drainId, attempt: n, errorClass: r.row.errorClass, waitMs: next.afterMs }, 'retrying batch');
      await waits.wait(next.afterMs);
      if (abandoned) return;
      if (batch.stillCurrent && !(await batch.stillCurrent().catch(() => true))) return drop(batch, 'superseded', n + 1);
    }
  }

  /** Parks the batch's records in the backlog with the attempt rows that led there; tickets released once written. */
  async function park(batch: ReadyBatch, rows: AttemptResult['row'][], why: 'attempts' | 'circuit'): Promise<void> {
    const drainId = batch.plan.drain.id;
    const landed = opts.onParking?.(drainId);
    await opts.accountant.record({ deliveries: rows, backlog: parkedRecords(batch) });
    landed?.();
    opts.logger.info({ event: 'deliver.parked', drainId, records: batch.entries.length, errorClass: rows[0]?.errorClass, why }, 'parked a batch');
    releaseAll(batch.tickets);
  }

  async function drop(batch: ReadyBatch, reason: string, attemptNo: number): Promise<void> {
    await opts.accountant.record(droppedEntry(batch.plan.drain, batch.entries.map((e) => e.id), reason, attemptNo, new Date(), batch.kind !== 'batch'));
    opts.events.recordsDropped(batch.plan.drain.type, reason, batch.entries.length);
    releaseAll(batch.tickets);
  }

  return {
    submit: (batch) => lanes.queue(batch, deliver),
    withdrawQueued: (drainId) => lanes.withdraw(drainId),
    deliverOnce: (batch, n) => lanes.run(batch.plan.drain.id, async () => {
      const r = await attempt(batch, n);
      await opts.accountant.record(r.outcome.status === 'success' ? successEntry(batch, r) : { deliveries: [r.row] });
      return r;
    }),
    attemptOnce: (batch, n) => lanes.run(batch.plan.drain.id, () => attempt(batch, n)),
    idle: () => lanes.idle(),
    waitingFor: (drainId) => lanes.waiting(drainId),
    abandonRetries() {
      abandoned = true;
      waits.wakeAll();
    },
    get inFlight() {
      return lanes.inFlight;
    },
  };
}
