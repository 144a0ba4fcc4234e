/**
 * The instants a request may name: RFC 3339 date-times of a real calendar day, from the epoch to
 * the last millisecond of year 9999. Postgres has no year 0 and JavaScript writes years past 9999
 * as `+010000-...`, which Postgres cannot read back, so an instant outside this range would fail
 * the store instead of being refused; no record of this service is older than the epoch.
 *
 * Every `format: 'date-time'` of a request schema is checked against these bounds (schema.ts), and
 * the other instant parameters (log reads' `since`/`until`, the workflow rollup's `from`/`to`) use
 * the same ones.
 */
import { parseRfc3339 } from '../../model/record.js';

export const EARLIEST_INSTANT_MS = 0; // 1970-01-01T00:00:00Z
export const LATEST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** The range in words, for the rules that refuse an instant outside it. */
export const INSTANT_RANGE = 'between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z';
/** The same in the API document's words (a day, without the clock time). */
export const INSTANT_DAYS = 'from 1970-01-01 to 9999-12-31 (UTC)';

/** Whether `ms` lies within the range an instant may take. */
export const withinInstantBounds = (ms: number): boolean => ms >= EARLIEST_INSTANT_MS && ms <= LATEST_INSTANT_MS;

/** An RFC 3339 date-time (with a zone) naming a real instant within the range, in milliseconds; NaN otherwise. */
export function boundedInstant(text: string): number {
  const ms = parseRfc3339(text);
  return withinInstantBounds(ms) ? ms : Number.NaN;
}
