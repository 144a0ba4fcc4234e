/**
 * Pagination for every family. Keyset paging: an opaque cursor holds the sort key of a page's last
 * row (N typed parts: keysetCursor), the statement asks for the rows after it (keysetAfter,
 * keysetOrder) and one more than the page holds (keysetFetch), and the page is cut from those rows
 * with the next cursor when there are more (keysetPage); those four are the store kernel's
 * (store/keyset.ts), re-exported here. Also the query helpers the paginated routes share.
 */
import type { AppError } from '../../errors.js';
import { KernelErrors } from './error-registry.js';
import { withinInstantBounds } from './instant.js';
import { unstorableTextIn } from './storable-text.js';

// The statement half (the condition, the order, the rows read, the page cut) is the store kernel's,
// so the store's repositories and the families' persistence the engine writes use it too.
export { keysetAfter, keysetFetch, keysetOrder, keysetPage, type KeysetColumn, type SortDirection } from '../../store/keyset.js';

const badRequest = (field: string, message: string) => KernelErrors.VALIDATION_FAILED(message, { field, message: [message] });

/**
 * How a cursor part is written and checked when read back:
 * - `instant`: a Date, written as its canonical ISO text with a four-digit year (JavaScript reaches
 *   years Postgres cannot store);
 * - `epochMs`: a Date, written as Unix milliseconds, within the instants the store holds;
 * - `integer`: a safe integer;
 * - `text`: a non-empty string the store can hold (no NUL, no half surrogate pair): an id.
 * Anything else would fail in the statement, as a 500, rather than as a bad cursor.
 */
export type CursorPart = 'instant' | 'epochMs' | 'integer' | 'text';
type PartValue<K extends CursorPart> = K extends 'instant' | 'epochMs' ? Date : K extends 'integer' ? number : string;
export type CursorValues<K extends readonly CursorPart[]> = { -readonly [I in keyof K]: PartValue<K[I]> };

export interface KeysetCursor<K extends readonly CursorPart[]> {
  encode(values: CursorValues<K>): string;
  /** The values `encode` wrote; anything else throws the cursor's bad-cursor error. */
  decode(raw: string): CursorValues<K>;
}

const MAX_CURSOR = 1024;

function writePart(kind: CursorPart, v: unknown): unknown {
  if (kind === 'instant') return (v as Date).toISOString();
  if (kind === 'epochMs') return (v as Date).getTime();
  return v;
}

/** The part read back, or undefined when it is not one `writePart` writes for `kind`. */
function readPart(kind: CursorPart, v: unknown): unknown {
  switch (kind) {
    case 'instant': {
      if (typeof v !== 'string' || !/^[1-9]\d{3}-/.test(v)) return undefined;
      const at = new Date(v);
      return !Number.isNaN(at.getTime()) && at.toISOString() === v ? at : undefined;
    }
    case 'epochMs':
      return typeof v === 'number' && Number.isSafeInteger(v) && withinInstantBounds(v) ? new Date(v) : undefined;
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
    case 'text':
      return typeof v === 'string' && v.length > 0 ? v : undefined;
  }
}

/**
 * A cursor of `parts`: base64url of the JSON array of the parts (after `tag`, when given: a value
 * the cursor must carry, such as the sort it was written for). `bad` is the error a cursor this
 * codec did not write answers (default: VALIDATION_FAILED naming `cursor`).
 */
export function keysetCursor<const K extends readonly CursorPart[]>(parts: K, opts: { tag?: string; bad?: () => AppError } = {}): KeysetCursor<K> {
  const bad = opts.bad ?? (() => badRequest('cursor', 'cursor is not a cursor this route returned'));
  const lead = opts.tag === undefined ? [] : [opts.tag];
  return {
    encode(values) {
      const written = (values as readonly unknown[]).map((v, i) => writePart(parts[i]!, v));
      return Buffer.from(JSON.stringify([...lead, ...written]), 'utf8').toString('base64url');
    },
    decode(raw) {
      if (raw.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(raw)) throw bad();
      let read: unknown;
      try {
        read = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
      } catch {
        throw bad();
      }
      // A cursor is text too: one holding what the store cannot (NUL, half a surrogate pair) is none of ours.
      if (!Array.isArray(read) || read.length !== lead.length + parts.length || unstorableTextIn(read) !== undefined) throw bad();
      if (opts.tag !== undefined && read[0] !== opts.tag) throw bad();
      const values = parts.map((kind, i) => readPart(kind, read[lead.length + i]));
      if (values.some((v) => v === undefined)) throw bad();
      return values as CursorValues<K>;
    },
  };
}

/** The kernel's cursor of a row's time and id (the drain, delivery, audit and log listings). */
const AT_ID = keysetCursor(['instant', 'text']);

export function encodeCursor(at: Date, id: string): string {
  return AT_ID.encode([at, id]);
}

export function decodeCursor(raw: string): { at: Date; id: string } {
  const [at, id] = AT_ID.decode(raw);
  return { at, id };
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
