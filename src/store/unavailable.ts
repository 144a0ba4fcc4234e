/**
 * Whether an error means the store could not be reached (as opposed to a statement it refused):
 * a refused or cut connection, the server shutting down or not yet accepting connections, too
 * many connections, or no pooled connection within the pool's wait. Routes that promise a
 * retryable answer when their control store is down (spec 03's `503 CONTROL_UNAVAILABLE`) tell
 * these apart from their own failures with it.
 *
 * Only an error the store's client raised counts: a client that hangs up mid-body raises the same
 * `ECONNRESET` from the request's own socket, and that says nothing about the store. openStore hands
 * out its connection through withStoreErrorsMarked, which remembers every error it raises.
 */
import type { Sql } from './sql.js';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /^Client has encountered a connection error/, /Connection terminated unexpectedly/];

/** Errors raised by the store's client (pg or PGlite), the same objects the callers then see. */
const raisedByStore = new WeakSet<object>();

export function isStoreUnavailable(e: unknown): boolean {
  return e instanceof Error && raisedByStore.has(e) && looksUnreachable(e);
}

function looksUnreachable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))) return true;
  if (MESSAGES.some((m) => m.test(e.message))) return true;
  // An AggregateError of connection attempts (one per address) that all failed.
  return e instanceof AggregateError && e.errors.length > 0 && e.errors.every(looksUnreachable);
}

const remember = (e: unknown): unknown => {
  if (typeof e === 'object' && e !== null) raisedByStore.add(e);
  return e;
};
const marked = <T>(p: Promise<T>): Promise<T> => p.catch((e: unknown) => Promise.reject(remember(e)));

/**
 * `sql` with every error of its own remembered as the store's. A transaction's callback is the
 * caller's code: what it throws is remembered only if a statement raised it; a failure to begin or
 * commit is the store's.
 */
export function withStoreErrorsMarked(sql: Sql): Sql {
  return {
    kind: sql.kind,
    query: (text, params, options) => marked(sql.query(text, params, options)),
    queryThenCommit: (text, params, options) => marked(sql.queryThenCommit(text, params, options)),
    exec: (text) => marked(sql.exec(text)),
    ...(sql.copyIn ? { copyIn: (text: string, rows: readonly Buffer[]) => marked(sql.copyIn!(text, rows)) } : {}),
    transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
      const thrownByCaller = new WeakSet<object>();
      return sql
        .transaction(async (tx) => {
          try {
            return await fn(withStoreErrorsMarked(tx));
          } catch (e) {
            if (typeof e === 'object' && e !== null) thrownByCaller.add(e);
            throw e;
          }
        })
        .catch((e: unknown) => Promise.reject(typeof e === 'object' && e !== null && thrownByCaller.has(e) ? e : remember(e)));
    },
    listen: (channel, onNotify, onDown) => marked(sql.listen(channel, onNotify, onDown)),
    close: () => sql.close(),
  };
}
