/**
 * Rate-limit buckets, declared by the families: fixed windows counted in the
 * database, so a budget holds across every API process. Two 429 styles, as
 * the families' specs give them:
 *
 *   suffixed  spec 01 part 8: each answer carries X-RateLimit-{Limit,Remaining,Reset}-<bucket>;
 *             a 429 adds a bare Retry-After in seconds (drains, log reads)
 *   named     spec 03 part 8: a 429 carries Retry-After and Retry-After-<bucket>, its body
 *             retryAfterSeconds, bucket, limit and windowSeconds (workflows)
 *   plain     spec 03 part 8: a 429 carries Retry-After, its body only {statusCode: 429, message}
 *             (the template catalog; its error is registered `plain`, error-registry.ts)
 */
import type { FastifyReply } from 'fastify';
import type { AppError } from '../../errors.js';
import type { ErrorFactory } from './error-registry.js';
import type { KernelStore } from '../../store/kernel.js';

/*
 * Counting. Each process counts a window's hits itself and reconciles with the store's window in
 * batches: one upsert adds the hits counted since the last one and returns the window's count,
 * from which the hits of every other process are known (that count less this process's own). A
 * request is decided on (other processes' hits, as last known) + (its own position among this
 * process's hits), with no statement of its own:
 *
 * - within one process the count is exact: the n-th request of a window here sees at least n, and
 *   exactly n when no other process counted (every API of one store in one process shares the
 *   counts: they are kept per store);
 * - the first request of a window in a process waits for a reconcile (the count the store already
 *   holds, from other processes or from before a restart);
 * - on Postgres (other processes may count) a request whose known count is older than `syncMs`
 *   (RATE_LIMIT_SYNC_MS, 100 ms) waits for a reconcile sent after it was counted, unless one is
 *   under way; one older than half of it starts one without waiting (so under steady traffic no
 *   request waits); `syncMs` 0: every request waits for one (one upsert per request, as many
 *   requests at a time as there are, sharing it);
 * - hits counted without waiting are sent within `syncMs` (the embedded store: 100 ms), or at once
 *   when they reach a twentieth of the limit.
 *
 * Across N processes a window can so admit more than its limit by at most what the other N - 1
 * processes admitted in the last `syncMs` plus one reconcile's round trip (docs/api.md, Rate
 * limits). A process refusing a bucket refuses it until the window ends, from memory.
 */

export interface Bucket {
  /** Suffix of the headers, e.g. `log-drains-read`. */
  name: string;
  limit: number;
  windowMs: number;
  /** The 429 answer's code (a registered one: kernel/error-registry.ts). */
  error: ErrorFactory;
  /** `suffixed` when not given (see the top of this file). */
  style?: 'suffixed' | 'named' | 'plain';
  /** The 429's message in the family's spec's words; the kernel's own when not given. */
  message?: (subject: string) => string;
}

const refuse = (bucket: Bucket, reply: FastifyReply, resetSec: number, subject: string): AppError => {
  reply.header('Retry-After', String(resetSec));
  const windowSeconds = Math.round(bucket.windowMs / 1000);
  const message = bucket.message?.(subject) ?? `Rate limit of ${bucket.limit} requests ${windowSeconds === 60 ? 'a minute' : `per ${windowSeconds} s`} exceeded; retry in ${resetSec} s.`;
  if (bucket.style === 'named') {
    reply.header(`Retry-After-${bucket.name}`, String(resetSec));
    return bucket.error(message, { retryAfterSeconds: resetSec, bucket: bucket.name, limit: bucket.limit, windowSeconds });
  }
  if (bucket.style === 'plain') return bucket.error(message);
  return bucket.error(message, { retryAfterSeconds: resetSec });
};

/** The budget headers of a suffixed bucket; named and plain buckets answer only their 429s with headers. */
function budgetHeaders(reply: FastifyReply, bucket: Bucket, remaining: number, resetSec: number): void {
  if (bucket.style === 'named' || bucket.style === 'plain') return;
  reply.header(`X-RateLimit-Limit-${bucket.name}`, String(bucket.limit));
  reply.header(`X-RateLimit-Remaining-${bucket.name}`, String(remaining));
  reply.header(`X-RateLimit-Reset-${bucket.name}`, String(resetSec));
}

/** Windows and refusals remembered per store at most; past it the memory starts again. */
const REMEMBERED_MAX = 10_000;
/** Hits counted without waiting are sent this long after, on the embedded store (Postgres: `syncMs`). */
const EMBEDDED_FLUSH_MS = 100;

interface Window {
  readonly bucket: Bucket;
  readonly subject: string;
  readonly startMs: number;
  /** This process's hits in the window. */
  local: number;
  /** Of those, the ones the store has counted. */
  flushed: number;
  /** Of those, the ones in the upsert under way. */
  sending: number;
  /** Other processes' hits, as the last reconcile found them. */
  others: number;
  /** When the last reconcile that answered was sent (-Infinity: none yet). */
  syncedAtMs: number;
  reconciling: Promise<void> | undefined;
  /** The reconcile that will start after the one under way, shared by whoever waits for it. */
  next: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
}

interface Counts {
  windows: Map<string, Window>;
  /**
   * Buckets known to be over their limit until their window ends. Over the limit stays over until
   * the window rolls, so answering those 429s from memory is exact, and a flood of refused
   * requests no longer costs a store write each (which slowed every other organization's).
   */
  refusedUntil: Map<string, number>;
  lastSweep: number;
}

/** The counts of each store (keyed by its rate-limits repository), shared by every API on it in this process. */
const countsOf = new WeakMap<object, Counts>();

export interface RateLimiterOptions {
  /** RATE_LIMIT_SYNC_MS (see the top of this file). */
  syncMs?: number;
}

export function createRateLimiter(store: Pick<KernelStore, 'rateLimits'>, options: RateLimiterOptions = {}) {
  const repo = store.rateLimits;
  const syncMs = options.syncMs ?? 100;
  // A store of this process alone (the embedded one) has no other counts to learn after the first.
  const shared = (repo as { shared?: boolean }).shared !== false;
  const flushMs = shared && syncMs > 0 ? syncMs : EMBEDDED_FLUSH_MS;
  let counts = countsOf.get(repo);
  if (!counts) countsOf.set(repo, (counts = { windows: new Map(), refusedUntil: new Map(), lastSweep: 0 }));
  const { windows, refusedUntil } = counts;
  const state = counts;

  const pending = (w: Window) => w.local - w.flushed - w.sending;

  /** One upsert adding the hits not yet sent; the other processes' count from its answer. */
  async function reconcile(w: Window): Promise<void> {
    const delta = pending(w);
    const sentAt = Date.now();
    w.sending += delta;
    try {
      const { hits } = await repo.hit(w.bucket.name, w.subject, w.bucket.windowMs, w.startMs, delta);
      w.flushed += delta;
      w.others = Math.max(w.others, hits - w.flushed);
      w.syncedAtMs = Math.max(w.syncedAtMs, sentAt);
    } finally {
      w.sending -= delta;
    }
  }

  /** The reconcile under way, or a new one. */
  function anyReconcile(w: Window): Promise<void> {
    w.reconciling ??= reconcile(w).finally(() => (w.reconciling = undefined));
    return w.reconciling;
  }

  /** A reconcile sent after this call: a new one, or the one that follows the one under way. */
  function freshReconcile(w: Window): Promise<void> {
    if (!w.reconciling) return anyReconcile(w);
    w.next ??= w.reconciling.then(noop, noop).then(() => {
      w.next = undefined;
      return anyReconcile(w);
    });
    return w.next;
  }

  /** Sends the hits counted without waiting: soon, or at once past a twentieth of the limit. */
  function flushLater(w: Window): void {
    if (pending(w) >= Math.max(1, Math.ceil(w.bucket.limit / 20)) && !w.reconciling) {
      void anyReconcile(w).catch(noop);
      return;
    }
    if (w.timer) return;
    w.timer = setTimeout(() => {
      w.timer = undefined;
      if (windows.get(keyOf(w.bucket, w.subject)) !== w || pending(w) === 0) return;
      // A failed send keeps its hits pending: they go with the next one.
      void anyReconcile(w).then(() => pending(w) > 0 && flushLater(w), () => flushLater(w));
    }, flushMs);
    w.timer.unref();
  }

  function windowOf(bucket: Bucket, subject: string, known: string, nowMs: number): Window {
    const startMs = Math.floor(nowMs / bucket.windowMs) * bucket.windowMs;
    const w = windows.get(known);
    if (w && w.startMs === startMs) return w;
    // A window that ended is forgotten with its unsent hits: they count for nothing any more.
    if (w?.timer) clearTimeout(w.timer);
    if (windows.size >= REMEMBERED_MAX) {
      for (const [k, old] of windows) if (old.startMs + old.bucket.windowMs <= nowMs) windows.delete(k);
      if (windows.size >= REMEMBERED_MAX) windows.clear();
    }
    const fresh: Window = {
      bucket, subject, startMs, local: 0, flushed: 0, sending: 0, others: 0, syncedAtMs: -Infinity,
      reconciling: undefined, next: undefined, timer: undefined,
    };
    windows.set(known, fresh);
    return fresh;
  }

  return {
    /** Counts one request of `subject` in `bucket`; sets the headers; throws 429 past the limit. */
    async enforce(bucket: Bucket, subject: string, reply: FastifyReply, nowMs = Date.now()): Promise<void> {
      const known = keyOf(bucket, subject);
      const until = refusedUntil.get(known);
      if (until !== undefined) {
        if (nowMs < until) {
          const resetSec = Math.max(1, Math.ceil((until - nowMs) / 1000));
          budgetHeaders(reply, bucket, 0, resetSec);
          throw refuse(bucket, reply, resetSec, subject);
        }
        refusedUntil.delete(known);
      }
      const w = windowOf(bucket, subject, known, nowMs);
      const position = ++w.local;
      if (w.syncedAtMs === -Infinity) {
        await (shared && syncMs === 0 ? freshReconcile(w) : anyReconcile(w));
      } else if (shared && nowMs - w.syncedAtMs >= syncMs && (syncMs === 0 || !w.reconciling)) {
        await freshReconcile(w);
      } else if (shared && nowMs - w.syncedAtMs >= syncMs / 2 && !w.reconciling) {
        // Ahead of the bound: under steady traffic the count is renewed before any request must wait.
        void anyReconcile(w).catch(noop);
      }
      if (pending(w) > 0) flushLater(w);
      const hits = w.others + position;
      const windowStartMs = w.startMs;
      const resetSec = Math.max(1, Math.ceil((windowStartMs + bucket.windowMs - nowMs) / 1000));
      budgetHeaders(reply, bucket, Math.max(0, bucket.limit - hits), resetSec);
      if (nowMs - state.lastSweep > 10 * bucket.windowMs) {
        state.lastSweep = nowMs;
        void repo.sweep(nowMs - 2 * bucket.windowMs).catch(() => {});
      }
      if (hits > bucket.limit) {
        if (refusedUntil.size >= REMEMBERED_MAX) refusedUntil.clear();
        refusedUntil.set(known, windowStartMs + bucket.windowMs);
        throw refuse(bucket, reply, resetSec, subject);
      }
    },
  };
}

const keyOf = (bucket: Bucket, subject: string): string => `${bucket.name}\u0000${subject}`;

function noop(): void {}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
