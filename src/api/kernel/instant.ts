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
import { isCalendarDay, parseRfc3339 } from '../../model/record.js';

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

const RELATIVE_RE = /^(\d{1,7})([smhdw])$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DATE_ONLY_RE = /^\d{4}-\d{2}-\d{2}$/;
// ISO 8601 date-time with a zone (Z or ±hh:mm / ±hhmm), optional seconds and fraction.
const DATE_TIME_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))$/i;

/** The forms instantOf reads, in the words of a refusal (after the parameter's name). */
export const INSTANT_FORMS = 'must be an ISO 8601 date or date-time with a zone, or relative such as 15m, 2h, 7d';

/**
 * A `since`/`until` of the log reads' forms (the log read routes and the drain replays): ISO 8601
 * (a date-time with a zone, or a date: `since` at its first instant, `until` at its last, so both
 * bounds stay inclusive) or relative to now (`15m`, `2h`, `7d`, also `s` and `w`). What it cannot
 * read is `malformed`; an instant outside the range a request may name is `out_of_range`.
 */
export function instantOf(name: 'since' | 'until', raw: string, nowMs: number): Date | 'malformed' | 'out_of_range' {
  const at = unbounded(name, raw, nowMs);
  if (at === undefined) return 'malformed';
  return withinInstantBounds(at.getTime()) ? at : 'out_of_range';
}

function unbounded(name: 'since' | 'until', raw: string, nowMs: number): Date | undefined {
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
  return undefined;
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
