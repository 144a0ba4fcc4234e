import type { Sql } from './sql.js';
import { rowBatches } from './row-batches.js';

export interface WindowHit {
  hits: number;
  windowStartMs: number;
}

interface Hit {
  bucket: string;
  subject: string;
  windowStartMs: number;
  count: number;
}

/** Upserts under way at once on Postgres; hits that come meanwhile wait for the next one of their lane. */
const POSTGRES_LANES = 4;

const UPSERT_ONE = `insert into rate_limit_windows (bucket, subject, window_start, hits) values ($1, $2, $3, $4)
  on conflict (bucket, subject, window_start) do update set hits = rate_limit_windows.hits + excluded.hits
  returning hits`;
const UPSERT_MANY = `insert into rate_limit_windows (bucket, subject, window_start, hits)
  select * from unnest($1::text[], $2::text[], $3::bigint[], $4::int[])
  on conflict (bucket, subject, window_start) do update set hits = rate_limit_windows.hits + excluded.hits
  returning bucket, subject, window_start, hits`;

const keyOf = (bucket: string, subject: string, windowStartMs: number): string => `${bucket}\u0000${subject}\u0000${windowStartMs}`;

/**
 * Fixed-window counters in the database, so every API process shares one
 * budget per subject. An API process counts locally and adds its hits here in
 * batches (src/api/kernel/rate-limit.ts): one upsert adds them and returns the
 * window's count after them.
 *
 * The upserts of different windows are gathered too: while one statement runs, the hits of other
 * windows wait for the next, which writes all of them (row-batches.ts). The first request of every
 * window waits for its upsert, so a burst of new subjects (a catalog's per-address buckets: every
 * client a window of its own) cost a statement and a commit each; now one serves up to a hundred.
 * A batch that fails fails every hit in it, as each would have alone: the store is down or refused
 * the statement.
 */
export function createRateLimitsRepo(sql: Sql) {
  const lanes = sql.kind === 'postgres' ? POSTGRES_LANES : 1;
  let turn = 0;

  const upsert = rowBatches<Hit, number>(async (_lane, hits) => {
    if (hits.length === 1) {
      const h = hits[0]!;
      const rows = await sql.query<{ hits: number }>(UPSERT_ONE, [h.bucket, h.subject, h.windowStartMs, h.count], { prepare: 'rate_limit_hit_one' });
      return [rows[0]!.hits];
    }
    // One row a window: two hits of one window (not made by one process's limiter, which sends a
    // window's hits one upsert at a time) would be a row affected twice, which Postgres refuses.
    const rowsOf = new Map<string, Hit>();
    for (const h of hits) {
      const key = keyOf(h.bucket, h.subject, h.windowStartMs);
      const same = rowsOf.get(key);
      rowsOf.set(key, same ? { ...same, count: same.count + h.count } : h);
    }
    const merged = [...rowsOf.values()];
    const rows = await sql.query<{ bucket: string; subject: string; window_start: number | string | bigint; hits: number }>(
      UPSERT_MANY,
      [merged.map((h) => h.bucket), merged.map((h) => h.subject), merged.map((h) => h.windowStartMs), merged.map((h) => h.count)],
      { prepare: 'rate_limit_hit_many' },
    );
    const after = new Map(rows.map((r) => [keyOf(r.bucket, r.subject, Number(r.window_start)), r.hits]));
    return hits.map((h) => {
      const count = after.get(keyOf(h.bucket, h.subject, h.windowStartMs));
      if (count === undefined) throw new Error(`rate limit window ${h.bucket}/${h.windowStartMs} not returned by its upsert`);
      return count;
    });
    // A batch fails with the store (down, or the statement refused), never for one of its hits.
  }, { againAlone: () => false });

  return {
    /**
     * Whether other processes can count in these windows: on Postgres, yes; the embedded store
     * (PGlite) belongs to one process (data-dir-lock.ts), whose own counts are then the whole count.
     */
    shared: sql.kind === 'postgres',

    /** Adds `count` hits (0: only reads) to the window holding `nowMs`; returns the window's count after them. */
    async hit(bucket: string, subject: string, windowMs: number, nowMs = Date.now(), count = 1): Promise<WindowHit> {
      const windowStartMs = Math.floor(nowMs / windowMs) * windowMs;
      turn = (turn + 1) % lanes;
      const hits = await upsert(String(turn), { bucket, subject, windowStartMs, count });
      return { hits, windowStartMs };
    },

    /** Deletes windows that ended before `beforeMs`. */
    async sweep(beforeMs: number): Promise<void> {
      await sql.query('delete from rate_limit_windows where window_start < $1', [beforeMs]);
    },
  };
}

export type RateLimitsRepo = ReturnType<typeof createRateLimitsRepo>;
