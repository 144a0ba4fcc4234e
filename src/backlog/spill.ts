/**
 * Batching across time (opt-in: BATCH_SPILL_BELOW_RECORDS > 0).
 *
 * A batch holds one resource and closes after BATCH_LINGER_MS, so a drain
 * whose records come from thousands of agents sends batches of a record or
 * two: every record pays most of an HTTPS POST. Holding those batches open
 * longer in memory does not scale (ten thousand agents times the records a
 * full batch wants). Instead, a drain whose live batches average fewer than
 * `belowRecords` records is held parked: its records go to the durable
 * backlog, as a paused drain's do, and every `lingerMs` the backlog pump
 * delivers them in one round, read resource by resource, in full batches
 * (backlog-pump.ts). Order within a resource holds: every record of the drain
 * takes the same path while it spills.
 *
 * After each round the drain's own rate decides whether live batching would
 * do: records an agent within one BATCH_LINGER_MS, estimated from the round.
 * If that reaches `belowRecords` the hold ends, and the drain goes live once
 * its backlog is empty (parking.ts keeps new records behind parked ones).
 */
import type { ParkingSet } from './parking.js';

export interface SpillOptions {
  /** Live batches averaging fewer records than this start a spill; 0 never does. */
  belowRecords: number;
  /** Time between a spilling drain's delivery rounds. */
  lingerMs: number;
  /** BATCH_LINGER_MS: what live batching would wait for an agent's records. */
  batchLingerMs: number;
  parking: ParkingSet;
  now?: () => number;
  onChange?: (drainId: string, spilling: boolean, why: { recordsPerBatch: number; batches: number }) => void;
}

/** What one delivery round of a spilling drain carried. */
export interface SpillRound {
  records: number;
  resources: number;
}

/** Window over which a drain's live batches are averaged (short: small batches queued meanwhile still go out one by one). */
const WINDOW_MS = 1000;
/**
 * Live batches a window must hold before a drain may spill: a drain with a
 * few slow agents sends a few small POSTs a second, which cost little; one
 * with thousands sends hundreds.
 */
const MIN_BATCHES = 25;

interface Window {
  start: number;
  batches: number;
  records: number;
}

export class SpillPolicy {
  private readonly windows = new Map<string, Window>();
  /** Spilling drains and when the spill began or their last round ended. */
  private readonly spilling = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly opts: SpillOptions) {
    this.now = opts.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.opts.belowRecords > 0;
  }

  isSpilling(drainId: string): boolean {
    return this.spilling.has(drainId);
  }

  /** The drains spilling now: the pump visits them even when their backlog is empty, to end the spill. */
  drains(): string[] {
    return [...this.spilling.keys()];
  }

  /**
   * A live batch of `records` records of the drain is ready to go. True: with it the drain starts
   * spilling (held parked from now): the caller parks it, and the drain's batches not yet sent, in
   * order, instead of sending them a record or two at a time.
   */
  observe(drainId: string, records: number): boolean {
    if (!this.enabled || this.spilling.has(drainId)) return false;
    const now = this.now();
    let w = this.windows.get(drainId);
    if (w === undefined || now - w.start >= WINDOW_MS) {
      if (w !== undefined && this.shouldSpill(w)) {
        this.windows.delete(drainId);
        this.spilling.set(drainId, now);
        this.opts.parking.hold(drainId);
        this.opts.onChange?.(drainId, true, { recordsPerBatch: w.records / w.batches, batches: w.batches });
        return true;
      }
      this.windows.set(drainId, (w = { start: now, batches: 0, records: 0 }));
    }
    w.batches++;
    w.records += records;
    return false;
  }

  private shouldSpill(w: Window): boolean {
    return w.batches >= MIN_BATCHES && w.records < this.opts.belowRecords * w.batches;
  }

  /**
   * Whether the pump should deliver the spilling drain's backlog now: once a spill linger has
   * passed since the last round, or sooner when the drain's records stopped coming (none parked
   * for a quarter of the spill linger, and at least one live linger): nothing more would join
   * the batches, so holding them only adds latency (a burst's end, a stream's end).
   */
  roundDue(drainId: string): boolean {
    const since = this.spilling.get(drainId);
    if (since === undefined) return true;
    const now = this.now();
    if (now - since >= this.opts.lingerMs) return true;
    const quietSince = Math.max(this.opts.parking.lastParkedAt(drainId) ?? since, since);
    return now - quietSince >= Math.max(this.opts.batchLingerMs, this.opts.lingerMs / 4);
  }

  /** A round of the spilling drain ended, delivering what `round` says; decides whether it keeps spilling. */
  roundDone(drainId: string, round: SpillRound): void {
    const since = this.spilling.get(drainId);
    if (since === undefined) return;
    const now = this.now();
    const spanMs = Math.max(1, now - since);
    // Records an agent would gather within one live linger at the rate this round saw.
    const perLiveBatch = round.resources === 0 ? 0 : (round.records / round.resources) * (this.opts.batchLingerMs / spanMs);
    if (round.records === 0 || perLiveBatch >= this.opts.belowRecords) {
      this.spilling.delete(drainId);
      this.opts.parking.release(drainId);
      this.opts.onChange?.(drainId, false, { recordsPerBatch: perLiveBatch, batches: round.resources });
      return;
    }
    this.spilling.set(drainId, now);
  }

  /** Forgets a drain (deleted, or no longer this worker's). */
  forget(drainId: string): void {
    this.windows.delete(drainId);
    if (this.spilling.delete(drainId)) this.opts.parking.release(drainId);
  }
}
