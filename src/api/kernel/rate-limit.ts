/**
 * Rate-limit buckets, declared by the families: fixed windows counted in the
 * database, so a budget holds across every API process. Two 429 styles, as
 * the families' specs give them:
 *
 *   suffixed  spec 01 part 8: each answer carries X-RateLimit-{Limit,Remaining,Reset}-<bucket>;
 *             a 429 adds a bare Retry-After in seconds (drains, log reads)
 *   named     spec 03 part 8: a 429 carries Retry-After and Retry-After-<bucket>, its body
 *             retryAfterSeconds, bucket, limit and windowSeconds (workflows)
 */
import type { FastifyReply } from 'fastify';
import type { AppError } from '../../errors.js';
import type { ErrorFactory } from './error-registry.js';
import type { Store } from '../../store/store.js';

export interface Bucket {
  /** Suffix of the headers, e.g. `log-drains-read`. */
  name: string;
  limit: number;
  windowMs: number;
  /** The 429 answer's code (a registered one: kernel/error-registry.ts). */
  error: ErrorFactory;
  /** `suffixed` when not given (see the top of this file). */
  style?: 'suffixed' | 'named';
}

const refuse = (bucket: Bucket, reply: FastifyReply, resetSec: number): AppError => {
  reply.header('Retry-After', String(resetSec));
  const windowSeconds = Math.round(bucket.windowMs / 1000);
  const message = `Rate limit of ${bucket.limit} requests ${windowSeconds === 60 ? 'a minute' : `per ${windowSeconds} s`} exceeded; retry in ${resetSec} s.`;
  if (bucket.style === 'named') {
    reply.header(`Retry-After-${bucket.name}`, String(resetSec));
    return bucket.error(message, { retryAfterSeconds: resetSec, bucket: bucket.name, limit: bucket.limit, windowSeconds });
  }
  return bucket.error(message, { retryAfterSeconds: resetSec });
};

/** The budget headers of a suffixed bucket; a named bucket answers only its 429s with headers. */
function budgetHeaders(reply: FastifyReply, bucket: Bucket, remaining: number, resetSec: number): void {
  if (bucket.style === 'named') return;
  reply.header(`X-RateLimit-Limit-${bucket.name}`, String(bucket.limit));
  reply.header(`X-RateLimit-Remaining-${bucket.name}`, String(remaining));
  reply.header(`X-RateLimit-Reset-${bucket.name}`, String(resetSec));
}

/** Buckets remembered as over their limit at most; past it the memory starts again (each process counts anyway). */
const REFUSED_MAX = 10_000;

export function createRateLimiter(store: Pick<Store, 'rateLimits'>) {
  let lastSweep = 0;
  /**
   * Buckets known to be over their limit until their window ends. Over the limit stays over until
   * the window rolls, so answering those 429s from memory is exact, and a flood of refused
   * requests no longer costs a store write each (which slowed every other organization's).
   */
  const refusedUntil = new Map<string, number>();
  return {
    /** Counts one request of `subject` in `bucket`; sets the headers; throws 429 past the limit. */
    async enforce(bucket: Bucket, subject: string, reply: FastifyReply, nowMs = Date.now()): Promise<void> {
      const known = `${bucket.name}\u0000${subject}`;
      const until = refusedUntil.get(known);
      if (until !== undefined) {
        if (nowMs < until) {
          const resetSec = Math.max(1, Math.ceil((until - nowMs) / 1000));
          budgetHeaders(reply, bucket, 0, resetSec);
          throw refuse(bucket, reply, resetSec);
        }
        refusedUntil.delete(known);
      }
      const { hits, windowStartMs } = await store.rateLimits.hit(bucket.name, subject, bucket.windowMs, nowMs);
      const resetSec = Math.max(1, Math.ceil((windowStartMs + bucket.windowMs - nowMs) / 1000));
      budgetHeaders(reply, bucket, Math.max(0, bucket.limit - hits), resetSec);
      if (nowMs - lastSweep > 10 * bucket.windowMs) {
        lastSweep = nowMs;
        void store.rateLimits.sweep(nowMs - 2 * bucket.windowMs).catch(() => {});
      }
      if (hits > bucket.limit) {
        if (refusedUntil.size >= REFUSED_MAX) refusedUntil.clear();
        refusedUntil.set(known, windowStartMs + bucket.windowMs);
        throw refuse(bucket, reply, resetSec);
      }
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
