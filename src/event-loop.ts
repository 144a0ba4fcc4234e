/**
 * Turns of the event loop for long work on the API's thread. The embedded
 * store (PGlite) runs its statements synchronously in this thread and resolves
 * them through promise callbacks only, so a loop of awaited statements, or of
 * records being validated, never lets a socket be read until it ends. Work
 * that may run long gives the loop a turn between slices instead.
 */
import { performance } from 'node:perf_hooks';

/** Synchronous work between two turns, at most (about: one step may run past it). */
export const SLICE_MS = 10;

/** Resolves on the next turn of the event loop, after pending I/O callbacks. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Yields to the event loop once `budgetMs` of synchronous work has passed since the last turn. */
export function slicer(budgetMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    const now = performance.now();
    if (now - since < budgetMs) return undefined;
    return nextTurn().then(() => {
      since = performance.now();
    });
  };
}
