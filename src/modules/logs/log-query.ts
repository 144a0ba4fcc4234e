/**
 * The query parameters of the log read routes (spec 01 part 4.3) once their
 * schema (schemas.ts) has checked their forms: the rules a form cannot say
 * (a date the calendar has, bounds in order and within what the store holds,
 * a cursor this route wrote, a page not too deep), and what they select.
 * Every refusal is a 400 naming the parameter.
 */
import { badRequest, decodeCursor } from '../../api/kernel/pagination.js';
import { INSTANT_RANGE, withinInstantBounds } from '../../api/kernel/instant.js';
import { isCalendarDay } from '../../model/record.js';
import { MAX_LIMIT, MAX_PAGE_OFFSET, type DownloadQuery, type ListQuery } from './schemas.js';


const RELATIVE_RE = /^(\d{1,7})([smhdw])$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DATE_ONLY_RE = /^\d{4}-\d{2}-\d{2}$/;
// ISO 8601 date-time with a zone (Z or ±hh:mm / ±hhmm), optional seconds and fraction.
const DATE_TIME_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))$/i;

/** What the list and download routes select. */
export interface LogSelection {
  /** A source name; undefined is `all`. */
  source: string | undefined;
  environment: string | undefined;
  since: Date | undefined;
  until: Date | undefined;
}

export interface LogListQuery extends LogSelection {
  limit: number;
  /** Continue after this entry (keyset). */
  after: { at: Date; id: string } | undefined;
  /** The deprecated page number; `explicit` when the request named it. */
  page: number;
  pageExplicit: boolean;
}

/**
 * `since`/`until`: ISO 8601 (a date-time with a zone, or a date: `since` at
 * its first instant, `until` at its last, so both bounds stay inclusive) or
 * relative to now (`15m`, `2h`, `7d`, also `s` and `w`).
 */
export function parseInstant(name: 'since' | 'until', raw: string, nowMs: number): Date {
  const at = parseInstantUnbounded(name, raw, nowMs);
  // Outside the instants a request may name (the kernel's), refused rather than clamped, so that a
  // typo (a year 0202) is named instead of silently reading everything.
  if (!withinInstantBounds(at.getTime())) {
    throw badRequest(name, `${name} must lie ${INSTANT_RANGE}`);
  }
  return at;
}

function parseInstantUnbounded(name: 'since' | 'until', raw: string, nowMs: number): Date {
  const rel = RELATIVE_RE.exec(raw);
  if (rel) return new Date(nowMs - Number(rel[1]) * UNIT_MS[rel[2]!]!);
  if (DATE_ONLY_RE.test(raw)) {
    if (isDay(raw)) {
      const day = new Date(`${raw}T00:00:00.000Z`);
      return name === 'since' ? day : new Date(day.getTime() + 86_400_000 - 1);
    }
  } else {
    const m = DATE_TIME_RE.exec(raw);
    // Date alone rolls impossible fields over (2026-02-30 became March 2nd, 24:00 the next day), so
    // the calendar day and the clock fields are checked first.
    if (m && isDay(m[1]!) && fieldsWithin(m[2], 23, m[3], 59, m[4], 59, m[7], 23, m[8], 59)) {
      const at = new Date(raw);
      if (!Number.isNaN(at.getTime())) return at;
    }
  }
  throw badRequest(name, `${name} must be an ISO 8601 date or date-time with a zone, or relative such as 15m, 2h, 7d`);
}

/** Whether `YYYY-MM-DD` is a day the calendar has. */
function isDay(ymd: string): boolean {
  const [y, m, d] = ymd.split('-').map(Number) as [number, number, number];
  return isCalendarDay(y, m, d);
}

/** Pairs of (field, most it may be); an absent field passes. */
function fieldsWithin(...pairs: (string | number | undefined)[]): boolean {
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i] !== undefined && Number(pairs[i]) > Number(pairs[i + 1])) return false;
  }
  return true;
}

export function parseSelection(query: DownloadQuery, nowMs = Date.now()): LogSelection {
  const { logSource, environment } = query;
  const since = query.since === undefined ? undefined : parseInstant('since', query.since, nowMs);
  const until = query.until === undefined ? undefined : parseInstant('until', query.until, nowMs);
  if (since && until && since.getTime() > until.getTime()) throw badRequest('since', 'since must not be after until');
  return { source: logSource === 'all' ? undefined : logSource, environment, since, until };
}

export function parseListQuery(query: ListQuery, nowMs = Date.now()): LogListQuery {
  const selection = parseSelection(query, nowMs);
  const { cursor, page: pageRaw } = query;
  if (cursor !== undefined && pageRaw !== undefined) throw badRequest('cursor', 'cursor cannot be combined with page');
  // Above the most a page holds, a limit is taken as that most.
  const limit = Math.min(Number(query.limit), MAX_LIMIT);
  const page = pageRaw === undefined ? 1 : Number(pageRaw);
  if ((page - 1) * limit > MAX_PAGE_OFFSET) {
    throw badRequest('page', `page reaches past ${MAX_PAGE_OFFSET} entries; continue with cursor (nextCursor)`);
  }
  return {
    ...selection,
    limit,
    after: cursor === undefined ? undefined : decodeCursor(cursor),
    page,
    pageExplicit: pageRaw !== undefined,
  };
}
