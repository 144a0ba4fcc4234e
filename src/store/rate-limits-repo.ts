import type { Sql } from './sql.js';

export interface WindowHit {
  hits: number;
  windowStartMs: number;
}

/**
 * Fixed-window counters in the database, so every API process shares one
 * budget per subject. One statement per request: an upsert that returns
 * the count after this hit.
 */
export function createRateLimitsRepo(sql: Sql) {
  return {
    async hit(bucket: string, subject: string, windowMs: number, nowMs = Date.now()): Promise<WindowHit> {
      const windowStartMs = Math.floor(nowMs / windowMs) * windowMs;
      const rows = await sql.query<{ hits: number }>(
        `insert into rate_limit_windows (bucket, subject, window_start, hits) values ($1, $2, $3, 1)
         on conflict (bucket, subject, window_start) do update set hits = rate_limit_windows.hits + 1
         returning hits`,
        [bucket, subject, windowStartMs],
      );
      return { hits: rows[0]!.hits, windowStartMs };
    },

    /** Deletes windows that ended before `beforeMs`. */
    async sweep(beforeMs: number): Promise<void> {
      await sql.query('delete from rate_limit_windows where window_start < $1', [beforeMs]);
    },
  };
}

export type RateLimitsRepo = ReturnType<typeof createRateLimitsRepo>;
