/**
 * Which drains' records go to the durable backlog instead of a live batch:
 * every drain that is not delivering (its state), plus those this worker
 * knows to have a backlog (to keep order: new records queue behind parked
 * ones) or to be failing. The backlog pump refreshes the set from the store
 * and clears a drain once its backlog is empty.
 */
export class ParkingSet {
  private drains = new Set<string>();

  has(drainId: string): boolean {
    return this.drains.has(drainId);
  }

  add(drainId: string): void {
    this.drains.add(drainId);
  }

  delete(drainId: string): void {
    this.drains.delete(drainId);
  }

  /** Replaces the set with the drains that have parked records now. */
  reset(drainIds: Iterable<string>): void {
    this.drains = new Set(drainIds);
  }

  get size(): number {
    return this.drains.size;
  }
}
