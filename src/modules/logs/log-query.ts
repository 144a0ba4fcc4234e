/**
 * The query parameters of the log read routes (spec 01 part 4.3) once their
 * schema (schemas.ts) has checked their forms: the rules a form cannot say
 * (a date the calendar has, bounds in order and within what the store holds,
 * a cursor this route wrote, a page not too deep), and what they select.
 * Every refusal is a 400 naming the parameter.
 */
import { badRequest, decodeCursor } from '../../api/kernel/pagination.js';
import { INSTANT_FORMS, INSTANT_RANGE, instantOf } from '../../api/kernel/instant.js';
import { MAX_LIMIT, MAX_PAGE_OFFSET, type DownloadQuery, type ListQuery } from './schemas.js';

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
 * `since`/`until` in the forms of the kernel's instantOf (instant.ts): ISO 8601 or relative to now,
 * within the instants a request may name. Refused with the parameter named.
 */
export function parseInstant(name: 'since' | 'until', raw: string, nowMs: number): Date {
  const at = instantOf(name, raw, nowMs);
  if (at === 'malformed') throw badRequest(name, `${name} ${INSTANT_FORMS}`);
  // Outside the instants a request may name (the kernel's), refused rather than clamped, so that a
  // typo (a year 0202) is named instead of silently reading everything.
  if (at === 'out_of_range') throw badRequest(name, `${name} must lie ${INSTANT_RANGE}`);
  return at;
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
