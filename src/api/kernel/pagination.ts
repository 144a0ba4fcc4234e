/**
 * Pagination for every family. Opaque keyset cursors: base64url of the JSON pair [ISO time, id] of the
 * last row of a page (ids may hold any character), and the query helpers
 * the paginated routes share.
 */
import { KernelErrors } from './error-registry.js';

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

/**
 * The spec's three paging forms, for the families that use them: cursor + limit (above), page +
 * limit, and offset + limit with a total count. Each refuses a malformed value with
 * VALIDATION_FAILED naming the parameter.
 */
function wholeNumber(raw: string | undefined, field: string, min: number, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw badRequest(field, max === Number.MAX_SAFE_INTEGER ? `${field} must be an integer of at least ${min}` : `${field} must be an integer from ${min} to ${max}`);
  }
  return Number(raw);
}

/** `page` (from 1) and `limit`: the page's first row is (page - 1) * limit. */
export function parsePageLimit(query: Record<string, unknown>, opts: { defaultLimit: number; maxLimit: number; maxPage?: number }): { page: number; limit: number; offset: number } {
  const limit = parseLimit(single(query, 'limit'), opts.defaultLimit, opts.maxLimit);
  const page = wholeNumber(single(query, 'page'), 'page', 1, 1, opts.maxPage);
  return { page, limit, offset: (page - 1) * limit };
}

/** `offset` (from 0) and `limit`. */
export function parseOffsetLimit(query: Record<string, unknown>, opts: { defaultLimit: number; maxLimit: number }): { offset: number; limit: number } {
  return { limit: parseLimit(single(query, 'limit'), opts.defaultLimit, opts.maxLimit), offset: wholeNumber(single(query, 'offset'), 'offset', 0, 0) };
}

/** A page of an offset listing with the total matching, and where the next page starts (null on the last). */
export function offsetPage<T>(items: T[], total: number, at: { offset: number; limit: number }): { items: T[]; total: number; limit: number; offset: number; nextOffset: number | null } {
  const next = at.offset + items.length;
  return { items, total, limit: at.limit, offset: at.offset, nextOffset: next < total ? next : null };
}
