import type { Sql } from './sql.js';

export interface WindowHit {
  hits: number;
  windowStartMs: number;
}

/**
 * Fixed-window counters in the database, so every API process shares one
 * budget per subject. An API process counts locally and adds its hits here in
 * batches (src/api/kernel/rate-limit.ts): one upsert adds them and returns the
 * window's count after them.
 */
export function createRateLimitsRepo(sql: Sql) {
  return {
    /**
     * Whether other processes can count in these windows: on Postgres, yes; the embedded store
     * (PGlite) belongs to one process (data-dir-lock.ts), whose own counts are then the whole count.
     */
    shared: sql.kind === 'postgres',

    /** Adds `count` hits (0: only reads) to the window holding `nowMs`; returns the window's count after them. */
    async hit(bucket: string, subject: string, windowMs: number, nowMs = Date.now(), count = 1): Promise<WindowHit> {
      const windowStartMs = Math.floor(nowMs / windowMs) * windowMs;
      const rows = await sql.query<{ hits: number }>(
        `insert into rate_limit_windows (bucket, subject, window_start, hits) values ($1, $2, $3, $4)
         on conflict (bucket, subject, window_start) do update set hits = rate_limit_windows.hits + excluded.hits
         returning hits`,
        [bucket, subject, windowStartMs, count],
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
