/**
 * Turns of the event loop for long work on the API's thread. A loop of steps
 * that resolve through promise callbacks only (records being validated, rows
 * being shaped) never lets a socket be read until it ends. Work that may run
 * long gives the loop a turn between slices instead.
 *
 * The budget is the process's, not each task's: when several requests are
 * each working in slices, one of them is resumed a turn (in the order they
 * yielded) and a task that finds the budget spent yields before its next
 * step, so a turn holds one budget of work and at most one step past it
 * however many tasks share it, and a request that just arrived waits about
 * that long.
 */
import { performance } from 'node:perf_hooks';

/** Synchronous work between two turns, at most (about: one step may run past it). */
export const SLICE_MS = 10;

/** When the work of this turn began, as far as the tasks working in slices know. */
let turnStartedAt = performance.now();

/** The next turn that tasks yielding now wait for: one for all of them. */
let pendingTurn: Promise<void> | undefined;

/**
 * Resolves on the next turn of the event loop, after pending I/O callbacks. Every task that yields
 * before that turn waits for the same immediate, so the turn's work starts the clock once: with an
 * immediate each, every callback of the same check phase restarted it, and four requests working in
 * slices held one turn for four budgets back to back.
 */
export const nextTurn = (): Promise<void> =>
  (pendingTurn ??= new Promise((resolve) =>
    setImmediate(() => {
      pendingTurn = undefined;
      turnStartedAt = performance.now();
      resolve();
    }),
  ));

/** Whether this turn's work has used `budgetMs`. */
const spent = (budgetMs: number): boolean => performance.now() - turnStartedAt >= budgetMs;

/** Tasks working in slices that yielded, in the order they did: the first is resumed on the next turn. */
const sliceWaiters: (() => void)[] = [];
let sliceTurnPending = false;

/** Resumes the first task waiting for a slice on the next turn, and the others on the turns after, one a turn. */
function resumeSlices(): void {
  if (sliceTurnPending || sliceWaiters.length === 0) return;
  sliceTurnPending = true;
  void nextTurn().then(() => {
    sliceTurnPending = false;
    sliceWaiters.shift()!();
    resumeSlices();
  });
}

/**
 * A step's check: yields to the event loop once this turn's work has used `budgetMs`. One task working
 * in slices is resumed a turn, in the order they yielded, so that a turn holds one budget and at most
 * one step past it. When every task that had yielded resumed on the same turn, each took a step past
 * the budget the first had used: four ingests of 240 KB records, 10 ms and three records' steps (1 to
 * 2 ms each), and the parsers woken by a chunk later in the same turn one more each.
 */
export function slicer(budgetMs = SLICE_MS): () => Promise<void> | undefined {
  return () => {
    if (!spent(budgetMs)) return undefined;
    const resumed = new Promise<void>((resolve) => sliceWaiters.push(resolve));
    resumeSlices();
    return resumed;
  };
}

/**
 * One statement at a time, handed on within the turn while its budget lasts and on the next turn
 * once it is spent: the embedded store's (store/pglite-thread.ts). Its thread runs what it is
 * posted in order, so every statement posted at once would queue there, a short read behind every
 * bulk statement before it. Background statements (bulk writes and reads of large records) wait
 * here behind the others instead: a short read asked by a request waits for the statement running,
 * not for every bulk one queued. `budgetMs`: how long a turn may go on handing statements on (the
 * embedded store hands on at once: each answer comes in a turn of its own).
 */
export function turnGate(budgetMs = SLICE_MS): { enter(background?: boolean): Promise<void>; leave(): void } {
  let held = false;
  const waiting: (() => void)[] = [];
  const background: (() => void)[] = [];
  return {
    async enter(inBackground = false) {
      if (!held) {
        held = true;
        return;
      }
      await new Promise<void>((resolve) => (inBackground ? background : waiting).push(resolve));
    },
    leave() {
      const next = waiting.shift() ?? background.shift();
      if (!next) {
        held = false;
        return;
      }
      if (spent(budgetMs)) void nextTurn().then(next);
      else next();
    },
  };
}
