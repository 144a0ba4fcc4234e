/**
 * Whether an error means the store could not be reached (as opposed to a statement it refused):
 * a refused or cut connection, the server shutting down or not yet accepting connections, too
 * many connections, or no pooled connection within the pool's wait. Routes that promise a
 * retryable answer when their control store is down (spec 03's `503 CONTROL_UNAVAILABLE`) tell
 * these apart from their own failures with it.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /^Client has encountered a connection error/, /Connection terminated unexpectedly/];

export function isStoreUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))) return true;
  if (MESSAGES.some((m) => m.test(e.message))) return true;
  // An AggregateError of connection attempts (one per address) that all failed.
  return e instanceof AggregateError && e.errors.length > 0 && e.errors.every(isStoreUnavailable);
}
