/**
 * A store outage, one rule for every route (spec 01 part 7.1.5, CONTRACT part 7): when the store
 * cannot be reached (store/unavailable.ts tells that apart from a statement it refused), the route
 * answers `503 UPSTREAM_UNAVAILABLE` in its family's envelope, or the family's own code where its
 * spec names one (the workflow control routes' `CONTROL_UNAVAILABLE`: route config
 * `storeUnavailable`).
 *
 * Whether the answer invites a retry is the route's declaration (`blindRetry`): a read (GET, HEAD)
 * is safe to repeat; a write only when the request carries an idempotency key, since the outage may
 * have cut it after its commit. A safe answer carries `retryAfterSeconds` and `Retry-After`; an
 * unsafe one neither, which tells the client the write may have applied (read before repeating).
 * A write that declares nothing is unsafe, and a write cannot declare itself safe without a key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { KernelErrors } from './error-registry.js';

/**
 * Whether a request of the route may be repeated blindly after a store outage:
 *   'safe'    repeating it changes nothing (the default of GET and HEAD; a write may not say it)
 *   'unsafe'  it may have applied (the default of every other method)
 *   { idempotencyKey }  safe when the request carries an idempotency key, as `idempotencyKey`
 *            finds it (keyedByHeader: the header the route reads its key from)
 */
export type BlindRetry = 'safe' | 'unsafe' | KeyedRetry;

/** Safe when `idempotencyKey` finds a key in the request (keyedByHeader, keyedInBody). */
export interface KeyedRetry {
  idempotencyKey: (req: FastifyRequest) => boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a client may do after this route's store outage (kernel/store-outage.ts); by method when not given. */
    blindRetry?: BlindRetry;
    /**
     * The family's own answer to a store outage where its spec names one (the workflow control
     * routes' CONTROL_UNAVAILABLE), given `retryAfterSeconds` when a retry is safe; the kernel's
     * UPSTREAM_UNAVAILABLE when not given.
     */
    storeUnavailable?: (retryAfterSeconds: number | undefined) => AppError;
  }
}

/** How long a client is asked to wait before repeating a request the store's outage refused. */
export const STORE_RETRY_AFTER_SECONDS = 1;

const READS = new Set(['GET', 'HEAD']);

/** Whether the request has a non-empty `name` header (lower case). */
export function hasHeader(req: FastifyRequest, name: string): boolean {
  const v = req.headers[name];
  return typeof v === 'string' && v.length > 0;
}

/** Safe with a key in the header the route reads it from (`idempotency-key`, `x-idempotency-key`: spec 03's idempotent writes). */
export const keyedByHeader = (name: 'idempotency-key' | 'x-idempotency-key'): KeyedRetry => ({ idempotencyKey: (req) => hasHeader(req, name) });

/**
 * Safe when the body carries the key, as `has` finds it in the parsed body. A request the outage
 * stopped before its body was read (while authenticating it, say) has run nothing: safe as well.
 */
export const keyedInBody = (has: (body: unknown) => boolean): KeyedRetry => ({ idempotencyKey: (req) => req.body === undefined || has(req.body) });

/** Refuses, when a route is registered, a write that declares itself safe without a key. */
export function installStoreOutage(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.config?.blindRetry === 'safe' && methods.some((m) => !READS.has(m))) {
      throw new AppError(500, 'ROUTE_RETRY_UNSAFE', `${methods.join(',')} ${route.url} declares a blind retry safe: a write is safe to repeat only by its idempotency key (src/api/kernel/store-outage.ts)`);
    }
  });
}

/** Whether this request may be repeated blindly: its route's declaration, or its method's default. */
export function blindRetrySafe(req: FastifyRequest): boolean {
  const declared = req.routeOptions.config?.blindRetry ?? (READS.has(req.method) ? 'safe' : 'unsafe');
  if (declared === 'safe') return true;
  if (declared === 'unsafe') return false;
  return declared.idempotencyKey(req);
}

/** The answer to a request the store's outage refused: the family's code, or UPSTREAM_UNAVAILABLE. */
export function storeOutageAnswer(req: FastifyRequest): AppError {
  const safe = blindRetrySafe(req);
  const retryAfterSeconds = safe ? STORE_RETRY_AFTER_SECONDS : undefined;
  const own = req.routeOptions.config?.storeUnavailable;
  if (own) return own(retryAfterSeconds);
  if (!safe) return KernelErrors.UPSTREAM_UNAVAILABLE('The store could not be reached; the change may have been applied: read it back before repeating it.');
  const message = READS.has(req.method)
    ? 'The store could not be reached; retry after Retry-After seconds.'
    : 'The store could not be reached; retry with the same idempotency key after Retry-After seconds.';
  return KernelErrors.UPSTREAM_UNAVAILABLE(message, { retryAfterSeconds });
}

/** How long a client is asked to wait before retrying a request a stopping process did not start. */
export const DRAINING_RETRY_AFTER_SECONDS = 1;

/**
 * What a process that is stopping answers a request that arrives before its requests in flight
 * have finished (spec 01 part 7.1.5, CONTRACT part 7): the request never started, one retry after
 * `Retry-After` is safe. Its body is spec 01's own `{error: {code, message, retryable}}`.
 */
export function drainingAnswer(): { status: number; headers: Record<string, string>; body: string } {
  const e = KernelErrors.CORE_DRAINING('This process is stopping and did not start the request; retry it after Retry-After seconds.');
  return {
    status: e.statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(DRAINING_RETRY_AFTER_SECONDS) },
    body: JSON.stringify({ error: { code: e.code, message: e.message, retryable: true } }),
  };
}
