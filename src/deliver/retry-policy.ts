/**
 * What follows an attempt: retry after a wait, park the batch's records in the
 * backlog, drop them with a reason, or nothing (delivered). Decided from the
 * attempt number, its outcome, when the first attempt was made, the batch's
 * kind and the buffer horizon; and how long a drain's circuit stays open. The only caller of backoff.ts.
 *
 *   delivered                                          -> done
 *   final (4xx but 408/429, redirect, SSRF refusal)    -> drop, reason: the error class
 *   retryable, past the horizon                        -> drop, reason: `horizon`
 *   retryable, `parkAfterAttempts` reached, a live batch -> park
 *   retryable otherwise                                -> retry after the backoff, never past the horizon
 *
 * The backlog pump's records are parked already: its policy never parks, and they expire by the
 * time they were parked, not by this horizon.
 */
import type { DeliveryKind } from '../model/delivery.js';
import type { AttemptOutcome } from '../model/delivery.js';
import { backoffMs, type BackoffOptions } from './backoff.js';
import { isRetryableClass } from './outcome.js';

export type RetryDecision =
  | { readonly action: 'done' }
  | { readonly action: 'park' }
  | { readonly action: 'drop'; readonly reason: string }
  | { readonly action: 'retry'; readonly afterMs: number };

export interface RetryPolicyOptions {
  retry: { baseMs: number; maxMs: number };
  /** Time from a batch's first attempt after which it is dropped rather than retried; Infinity: never. */
  horizonMs: number;
  /** Failed attempts of a live batch before its records are parked; Infinity: never parked. */
  parkAfterAttempts: number;
}

export type RetryPolicy = (attempt: number, outcome: AttemptOutcome, firstAttemptAt: number, kind: DeliveryKind, now?: number) => RetryDecision;

// Decisions without a number are shared: a delivered batch costs no allocation here.
const DONE: RetryDecision = Object.freeze({ action: 'done' });
const PARK: RetryDecision = Object.freeze({ action: 'park' });
const drops = new Map<string, RetryDecision>();
const dropFor = (reason: string): RetryDecision => {
  let d = drops.get(reason);
  if (d === undefined) drops.set(reason, (d = Object.freeze({ action: 'drop', reason })));
  return d;
};

export function retryPolicy(opts: RetryPolicyOptions): RetryPolicy {
  return (attempt, outcome, firstAttemptAt, kind, now = Date.now()) => {
    if (outcome.status === 'success') return DONE;
    const expired = now - firstAttemptAt >= opts.horizonMs;
    if (outcome.status === 'failure' || expired || !isRetryableClass(outcome.errorClass)) return dropFor(expired ? 'horizon' : outcome.errorClass);
    // Failing for long: park durably and free the partition; the backlog pump takes over.
    if (attempt >= opts.parkAfterAttempts && kind === 'batch') return PARK;
    const wait = backoffMs(attempt, opts.retry, outcome.retryAfterMs);
    return { action: 'retry', afterMs: Math.min(wait, Math.max(0, firstAttemptAt + opts.horizonMs - now)) };
  };
}

/**
 * The waits between retries, all cut short at once by `wakeAll` (a stopping worker abandons its
 * retries: the batches are re-read after restart).
 */
export function retryWaits(): { wait(ms: number): Promise<void>; wakeAll(): void } {
  const sleepers = new Set<() => void>();
  return {
    wait: (ms) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(done, ms);
        function done() {
          clearTimeout(t);
          sleepers.delete(done);
          resolve();
        }
        sleepers.add(done);
      }),
    wakeAll() {
      for (const wake of [...sleepers]) wake();
    },
  };
}

/**
 * How long a drain's circuit stays open (circuit.ts): the Retry-After asked at a first opening,
 * otherwise the backoff of the `reopenings`-th failed probe (or its Retry-After, if longer), never
 * past `opts.maxMs`. Here so that one module decides every wait the engine computes.
 */
export function circuitOpenMs(reopenings: number, opts: BackoffOptions, retryAfterMs: number | undefined): number {
  if (reopenings === 0 && retryAfterMs !== undefined) return Math.min(opts.maxMs, retryAfterMs);
  return Math.min(opts.maxMs, backoffMs(reopenings + 1, opts, retryAfterMs));
}
