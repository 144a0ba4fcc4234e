/**
 * The daily rollup of a definition's runs (spec 03 part 4.3, contract W5): one row per UTC
 * creation day that has runs, oldest first; answers are kept 60 seconds per query.
 */
import type { Sql } from '../../store/sql.js';
import { WorkflowErrors } from './errors.js';
import { validationFailed } from './service.js';
import { INSTANT_RANGE, withinInstantBounds } from '../../api/kernel/instant.js';
import { isCalendarDay } from '../../model/record.js';
import { DAY_MS } from '../../model/time.js';
import { runsByDay, stepFailuresByDay } from './sql/rollup.js';

export const ROLLUP_MAX_DAYS = 90;
const CACHE_MS = 60_000;
const CACHE_MAX = 1000;

export interface RollupRow {
  date: string;
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  suspended: number;
  p50DurationMs: number | null;
  p95DurationMs: number | null;
  creditsTotal: number;
  stepFailures: number;
}

/**
 * `from` or `to` as Unix ms (digits) or ISO 8601, within the instants the store holds (the kernel's
 * bounds: a year 0 or 10000 has no timestamp there); undefined when absent.
 */
function instant(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  const ms = /^\d{1,15}$/.test(raw) ? Number(raw) : /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw) && realDay(raw) ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(ms)) throw validationFailed([{ path: name, constraint: 'format', message: `${name} must be Unix milliseconds or an ISO 8601 date-time` }]);
  if (!withinInstantBounds(ms)) throw validationFailed([{ path: name, constraint: 'format', message: `${name} must lie ${INSTANT_RANGE}` }]);
  return ms;
}

/** Whether the text's `YYYY-MM-DD` is a day the calendar has (Date.parse rolls 2026-02-30 over to March). */
function realDay(raw: string): boolean {
  const [y, m, d] = raw.slice(0, 10).split('-').map(Number) as [number, number, number];
  return isCalendarDay(y, m, d);
}

export function createRollups(sql: Sql) {
  const cache = new Map<string, { atMs: number; answer: Record<string, unknown> }>();

  async function compute(workflowId: string, from: number, to: number): Promise<RollupRow[]> {
    const [fromAt, toAt] = [new Date(from).toISOString(), new Date(to).toISOString()];
    const days = await runsByDay(sql, workflowId, fromAt, toAt);
    const failures = await stepFailuresByDay(sql, workflowId, fromAt, toAt);
    const failed = new Map(failures.map((f) => [f.date, f.n]));
    const round = (v: number | null) => (v === null ? null : Math.round(Number(v)));
    return days.map((d) => ({
      date: d.date, runs: d.runs, completed: d.completed, failed: d.failed, cancelled: d.cancelled, suspended: d.suspended,
      p50DurationMs: round(d.p50), p95DurationMs: round(d.p95), creditsTotal: Number(d.credits), stepFailures: failed.get(d.date) ?? 0,
    }));
  }

  return {
    /** The rollup answer for the query as given (kept 60 seconds); throws the route's 400s. */
    async rollup(workflowId: string, query: { from?: string | undefined; to?: string | undefined }, nowMs = Date.now()): Promise<Record<string, unknown>> {
      const key = JSON.stringify([workflowId, query.from ?? null, query.to ?? null]);
      const kept = cache.get(key);
      if (kept && nowMs - kept.atMs < CACHE_MS) return kept.answer;
      const to = instant(query.to, 'to') ?? nowMs;
      const from = instant(query.from, 'from') ?? to - 30 * DAY_MS;
      if (from > to) throw validationFailed([{ path: 'from', constraint: 'maximum', message: 'from must not be after to' }]);
      const days = Math.ceil((to - from) / DAY_MS);
      if (days > ROLLUP_MAX_DAYS) {
        throw WorkflowErrors.ROLLUP_RANGE_TOO_WIDE(`The rollup range is ${days} days; at most ${ROLLUP_MAX_DAYS} days may be asked for`, { maxDays: ROLLUP_MAX_DAYS, days });
      }
      const answer = { workflowId, bucket: 'day', from, to, rows: await compute(workflowId, from, to) };
      if (cache.size >= CACHE_MAX) for (const [k, v] of cache) if (nowMs - v.atMs >= CACHE_MS) cache.delete(k);
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(key, { atMs: nowMs, answer });
      return answer;
    },
  };
}

export type Rollups = ReturnType<typeof createRollups>;
