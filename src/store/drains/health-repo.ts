import type { Sql } from '../sql.js';
import { HOUR_MS, hourOf } from '../../model/time.js';

export interface HourlyIncrement {
  drainId: string;
  h: number;
  delivered: number;
  dropped: number;
  rejected: number;
}

export interface HourlyPoint {
  h: number;
  delivered: number;
  dropped: number;
  rejected: number;
}

export interface DrainHealthFacts {
  hourly: HourlyPoint[];
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastStatusCode: number | null;
  p50LatencyMs: number | null;
  scrubHits24h: number;
}

export function createHealthRepo(sql: Sql) {
  return {
    /** Adds counts to the hourly rows; callers aggregate first, so this is one statement per flush. */
    async addHourly(increments: readonly HourlyIncrement[]): Promise<void> {
      if (increments.length === 0) return;
      await sql.query(
        `insert into drain_hourly (drain_id, h, delivered, dropped, rejected)
         select * from unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::int[])
         on conflict (drain_id, h) do update set
           delivered = drain_hourly.delivered + excluded.delivered,
           dropped = drain_hourly.dropped + excluded.dropped,
           rejected = drain_hourly.rejected + excluded.rejected`,
        [
          increments.map((i) => i.drainId),
          increments.map((i) => i.h),
          increments.map((i) => i.delivered),
          increments.map((i) => i.dropped),
          increments.map((i) => i.rejected),
        ],
      );
    },

    /** The 24 points of the read form: oldest first, zero-filled, the newest the current hour. */
    async facts(drainId: string, nowMs = Date.now()): Promise<DrainHealthFacts> {
      const newest = hourOf(nowMs);
      const oldest = newest - 23;
      const [rows, last, stats] = await Promise.all([
        sql.query<HourlyPoint>(
          'select h, delivered, dropped, rejected from drain_hourly where drain_id = $1 and h between $2 and $3',
          [drainId, oldest, newest],
        ),
        sql.query<{ ok: boolean; started_at: Date; status_code: number | null }>(
          `select distinct on (ok) ok, started_at, status_code from deliveries
           where drain_id = $1 and kind in ('batch', 'test', 'verify')
           order by ok, started_at desc, id desc`,
          [drainId],
        ),
        sql.query<{ p50: number | null; scrub: number | null }>(
          `select percentile_disc(0.5) within group (order by latency_ms) as p50, sum(scrub_hits)::int as scrub
           from deliveries where drain_id = $1 and started_at > $2 and kind in ('batch', 'test')`,
          [drainId, new Date(nowMs - 24 * HOUR_MS).toISOString()],
        ),
      ]);
      const byHour = new Map(rows.map((r) => [Number(r.h), r]));
      const hourly: HourlyPoint[] = [];
      for (let h = oldest; h <= newest; h++) {
        const r = byHour.get(h);
        hourly.push({ h, delivered: r?.delivered ?? 0, dropped: r?.dropped ?? 0, rejected: r?.rejected ?? 0 });
      }
      const success = last.find((r) => r.ok);
      const failure = last.find((r) => !r.ok);
      const newestAttempt = [success, failure]
        .filter((r): r is NonNullable<typeof r> => r !== undefined)
        .sort((a, b) => b.started_at.getTime() - a.started_at.getTime())[0];
      return {
        hourly,
        lastSuccessAt: success?.started_at ?? null,
        lastFailureAt: failure?.started_at ?? null,
        lastStatusCode: newestAttempt?.status_code ?? null,
        p50LatencyMs: stats[0]?.p50 ?? null,
        scrubHits24h: stats[0]?.scrub ?? 0,
      };
    },
  };
}

export type HealthRepo = ReturnType<typeof createHealthRepo>;
