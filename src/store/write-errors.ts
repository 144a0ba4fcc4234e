/**
 * Which failed writes are worth trying again. Postgres names the cause of
 * every error it raises (SQLSTATE); a connection cut, a deadlock, a full
 * disk or a server shutting down pass, while a row Postgres refuses for what
 * it holds (an index row too large, a value out of range, a malformed
 * JSON text, a stack depth limit) is refused again however often it is
 * written. Errors without a SQLSTATE (sockets, timeouts) count as passing.
 */

/** SQLSTATE classes of errors that concern the data written, not the moment. */
const PERMANENT_CLASSES = new Set([
  '22', // data exception: out of range, invalid text representation, untranslatable character
  '23', // integrity constraint violation
  '54', // program limit exceeded: index row too large, stack depth, too many columns
  '42', // syntax error or access rule violation: a statement that can never run
]);

export function isPermanentWriteError(e: unknown): boolean {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && PERMANENT_CLASSES.has(code.slice(0, 2));
}
