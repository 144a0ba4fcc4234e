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

export class Ticket {
  private pending = 1;
  constructor(
    readonly records: number,
    private readonly onSettled: (t: Ticket) => void,
  ) {}

  hold(n = 1): void {
    this.pending += n;
  }

  release(n = 1): void {
    this.pending -= n;
    if (this.pending === 0) this.onSettled(this);
    else if (this.pending < 0) throw new Error('ticket released more often than held');
  }

  /** Routing of the chunk is complete; its remaining holds belong to batches and writes. */
  seal(): void {
    this.release();
  }

  get settled(): boolean {
    return this.pending === 0;
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
  /** Records taken but not yet settled, above which sources wait. */
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
    const ticket = new Ticket(records, () => this.onSettled(partition));
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

  /** Resolves when nothing is in flight (graceful stop). */
  async drained(): Promise<void> {
    while (this.inFlight > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Forgets a partition (revoked in a rebalance): its records will be re-read by the new owner. */
  forget(partition: number): void {
    const queue = this.partitions.get(partition);
    if (!queue) return;
    for (const c of queue) if (!c.ticket.settled) this.inFlight -= c.ticket.records;
    this.partitions.delete(partition);
    this.wake();
  }

  private onSettled(partition: number): void {
    const queue = this.partitions.get(partition);
    if (!queue) return;
    let next: string | undefined;
    let freed = 0;
    while (queue.length > 0 && queue[0]!.ticket.settled) {
      const c = queue.shift()!;
      next = c.next;
      freed += c.ticket.records;
    }
    if (next !== undefined) {
      this.inFlight -= freed;
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
