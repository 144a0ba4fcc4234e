/**
 * Which drains' records go to the durable backlog instead of a live batch:
 * every drain that is not delivering (its state), plus those this worker
 * knows to have a backlog (to keep order: new records queue behind parked
 * ones) or to be failing. The backlog pump refreshes the set from the store
 * and clears a drain once its backlog is empty.
 *
 * The store alone cannot say so while a park is still being written (the
 * accountant buffers): a drain whose park is in flight, or landed after the
 * pump started reading, stays parked. Without that, a pump pass reading an
 * empty backlog a moment before the rows land would let the next records
 * overtake them.
 *
 * A drain can also be held parked whatever its backlog shows, for as long as
 * any of its holds lasts: `spill` (spill.ts: a drain batching across time
 * sends every record through the backlog) and `circuit` (deliver/circuit.ts:
 * an open circuit sends nothing live).
 */
/** Why a drain is held parked: it batches across time, or its circuit is open. */
export type HoldReason = 'spill' | 'circuit';

export class ParkingSet {
  private drains = new Set<string>();
  /** Parks being written, by drain. */
  private inFlight = new Map<string, number>();
  /** Sequence number of each drain's latest landed park. */
  private landedAt = new Map<string, number>();
  /** Drains parked whatever the store shows, with the holds keeping them, until released. */
  private held = new Map<string, Set<HoldReason>>();
  /** When records of each drain were last handed to the backlog (spill.ts: has the inflow stopped?). */
  private lastParked = new Map<string, number>();
  private seq = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** When records of the drain were last sent to the backlog (undefined: not since this worker started). */
  lastParkedAt(drainId: string): number | undefined {
    return this.lastParked.get(drainId);
  }

  has(drainId: string): boolean {
    return this.drains.has(drainId) || this.held.has(drainId);
  }

  /** Parks the drain until `release` of the same reason: the pump's refreshes do not clear it. */
  hold(drainId: string, reason: HoldReason = 'spill'): void {
    let reasons = this.held.get(drainId);
    if (reasons === undefined) this.held.set(drainId, (reasons = new Set()));
    reasons.add(reason);
  }

  /** Ends a hold: once none is left the drain stays parked until its backlog is read empty, as any parked drain. */
  release(drainId: string, reason: HoldReason = 'spill'): void {
    const reasons = this.held.get(drainId);
    if (!reasons?.delete(reason)) return;
    if (reasons.size > 0) return;
    this.held.delete(drainId);
    this.add(drainId);
  }

  /** Records of the drain were parked and the rows are written. */
  add(drainId: string): void {
    this.parking(drainId)();
  }

  /** Records of the drain are being parked: it is parked from now; call the answer once the rows are written. */
  parking(drainId: string): () => void {
    this.drains.add(drainId);
    this.lastParked.set(drainId, this.now());
    this.inFlight.set(drainId, (this.inFlight.get(drainId) ?? 0) + 1);
    return () => {
      const n = (this.inFlight.get(drainId) ?? 1) - 1;
      if (n > 0) this.inFlight.set(drainId, n);
      else this.inFlight.delete(drainId);
      this.landedAt.set(drainId, ++this.seq);
    };
  }

  /** Taken before reading the store: parks landing after it may be missing from what was read. */
  mark(): number {
    return this.seq;
  }

  /** Whether what the store showed at `mark` may be missing parks of the drain. */
  private unsettled(drainId: string, mark: number): boolean {
    return (this.inFlight.get(drainId) ?? 0) > 0 || (this.landedAt.get(drainId) ?? 0) > mark;
  }

  /** Clears the drain (its backlog read empty after `mark`) unless a park may have landed since. */
  clear(drainId: string, mark: number): void {
    if (this.unsettled(drainId, mark)) return;
    this.drains.delete(drainId);
    this.landedAt.delete(drainId);
  }

  /** Replaces the set with the drains the store showed parked records for after `mark`, keeping unsettled ones. */
  reset(drainIds: Iterable<string>, mark: number): void {
    const next = new Set(drainIds);
    for (const d of this.drains) if (this.unsettled(d, mark)) next.add(d);
    for (const d of this.landedAt.keys()) if (!next.has(d) && !this.unsettled(d, mark)) this.landedAt.delete(d);
    this.drains = next;
  }

  get size(): number {
    let n = this.drains.size;
    for (const d of this.held.keys()) if (!this.drains.has(d)) n++;
    return n;
  }
}
