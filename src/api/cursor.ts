/**
 * Opaque keyset cursors: base64url of the JSON pair [ISO time, id] of the
 * last row of a page (ids may hold any character), and the query helpers
 * the paginated routes share.
 */
import { KernelErrors } from './kernel/error-registry.js';

export function encodeCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id]), 'utf8').toString('base64url');
}

const badRequest = (field: string, message: string) => KernelErrors.VALIDATION_FAILED(message, { field, message: [message] });

export function decodeCursor(raw: string): { at: Date; id: string } {
  const bad = () => badRequest('cursor', 'cursor is not a cursor this route returned');
  if (raw.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw bad();
  let pair: unknown;
  try {
    pair = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string' || pair[1].length === 0) throw bad();
  // Only what encodeCursor writes: a canonical ISO time with a four-digit year (JavaScript reaches
  // years Postgres cannot store), and an id Postgres text can hold (no NUL). Anything else would
  // fail in the query, as a 500, rather than here.
  const at = new Date(pair[0]);
  if (Number.isNaN(at.getTime()) || at.toISOString() !== pair[0] || !/^[1-9]\d{3}-/.test(pair[0]) || pair[1].includes('\u0000')) throw bad();
  return { at, id: pair[1] };
}

/** A query parameter given at most once. */
export function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(name, `${name} may be given once`);
  return v;
}

/** `limit`: an integer from 1 to `max`, default `fallback`; above `max` either refused or clamped. */
export function parseLimit(raw: string | undefined, fallback: number, max: number, clamp = false): number {
  if (raw === undefined) return fallback;
  const message = clamp ? `limit must be a positive integer (above ${max} it is taken as ${max})` : `limit must be an integer from 1 to ${max}`;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw badRequest('limit', message);
  const n = Number(raw);
  if (n > max) {
    if (clamp) return max;
    throw badRequest('limit', message);
  }
  return n;
}

export { badRequest };
