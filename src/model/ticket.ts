/**
 * What the engine holds of a chunk's ticket (source/offset-tracker.ts): one
 * hold per obligation not yet accounted for (a record in a batch, a write not
 * yet durable), released when it is. A chunk's position is committed only once
 * every hold is released.
 */
export interface Ticket {
  hold(n?: number): void;
  release(n?: number): void;
}

/** Releases one hold of each ticket (a batch's, once what happened to it is durable). */
export function releaseAll(tickets: readonly Ticket[]): void {
  for (const t of tickets) t.release();
}
