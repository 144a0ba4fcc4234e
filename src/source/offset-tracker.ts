/**
 * At-least-once bookkeeping (ARCHITECTURE invariant 1).
 *
 * Each chunk of messages taken from a source partition gets a Ticket that
 * counts its outstanding obligations: one per (record, drain) handed to a
 * batch, one per dead letter not yet written, plus one "routing" hold that is
 * released when every message of the chunk has been routed. A chunk is
 * settled when its count reaches zero. A partition's committable position
 * advances only over a prefix of settled chunks, in offset order, so a crash
 * at any point re-reads everything not yet accounted for and loses nothing.
 */
import type { Ticket as EngineTicket } from '../model/ticket.js';

export class Ticket implements EngineTicket {
  private pending = 1;
  private sealed = false;
  /** What this chunk adds to the tracker's in-flight count now (see inFlightShare). */
  private counted: number;
  constructor(
    readonly records: number,
    private readonly onSettled: (t: Ticket) => void,
    private onCount: (delta: number) => void = () => {},
  ) {
    this.counted = records;
  }

  hold(n = 1): void {
    this.pending += n;
    this.recount();
  }

  release(n = 1): void {
    this.pending -= n;
    if (this.pending < 0) throw new Error('ticket released more often than held');
    this.recount();
    if (this.pending === 0) this.onSettled(this);
  }

  /** Routing of the chunk is complete; its remaining holds belong to batches and writes. */
  seal(): void {
    this.sealed = true;
    this.release();
  }

  get settled(): boolean {
    return this.pending === 0;
  }

  /**
   * The records of the chunk still held in memory: all of them while it is
   * being routed, then at most one per outstanding hold (each batch entry and
   * each pending write holds one), and none once settled, even while an
   * earlier chunk keeps its offset from being committed. Counting whole chunks
   * until their offsets commit made one lingering record hold back a chunk
   * of thousands, and every chunk after it.
   */
  get inFlightShare(): number {
    return this.counted;
  }

  /** Stops reporting to the tracker (the partition was revoked and forgotten). */
  detach(): void {
    this.onCount = () => {};
  }

  private recount(): void {
    const c = this.sealed ? Math.min(this.records, this.pending) : this.records;
    if (c === this.counted) return;
    const delta = c - this.counted;
    this.counted = c;
    this.onCount(delta);
  }
}

interface ChunkEntry {
  ticket: Ticket;
  /** Position to commit once this chunk and all before it are settled. */
  next: string;
}

export interface OffsetTrackerOptions {
  /** Called with the partition and the position after the settled prefix. */
  onCommittable: (partition: number, next: string) => void;
  /** Records taken and still held (see Ticket.inFlightShare), above which sources wait. */
  maxInFlightRecords: number;
}

export class OffsetTracker {
  private readonly partitions = new Map<number, ChunkEntry[]>();
  private inFlight = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly options: OffsetTrackerOptions) {}

  /** Opens a ticket for a chunk of `records` messages ending just before position `next`. */
  open(partition: number, next: string, records: number): Ticket {
    let queue = this.partitions.get(partition);
    if (!queue) this.partitions.set(partition, (queue = []));
    this.inFlight += records;
    const ticket = new Ticket(records, () => this.onSettled(partition), (delta) => {
      this.inFlight += delta;
      if (delta < 0) this.wake();
    });
    queue.push({ ticket, next });
    return ticket;
  }

  get inFlightRecords(): number {
    return this.inFlight;
  }

  /** Resolves when the in-flight count is below the limit: the source's backpressure. */
  async waitForCapacity(): Promise<void> {
    while (this.inFlight >= this.options.maxInFlightRecords) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Resolves once there is capacity, or after `ms` at most (sources at the cap heartbeat and re-check). */
  waitForCapacityAtMost(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([this.waitForCapacity(), new Promise<void>((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
  }

  /** Resolves when nothing is in flight (graceful stop). */
  async drained(): Promise<void> {
    while (this.inFlight > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Forgets a partition (revoked in a rebalance): its records will be re-read by the new owner. */
  forget(partition: number): void {
    const queue = this.partitions.get(partition);
    if (!queue) return;
    for (const c of queue) {
      this.inFlight -= c.ticket.inFlightShare;
      c.ticket.detach();
    }
    this.partitions.delete(partition);
    this.wake();
  }

  private onSettled(partition: number): void {
    const queue = this.partitions.get(partition);
    if (!queue) return;
    let next: string | undefined;
    while (queue.length > 0 && queue[0]!.ticket.settled) next = queue.shift()!.next;
    if (next !== undefined) {
      this.options.onCommittable(partition, next);
      this.wake();
    }
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}
