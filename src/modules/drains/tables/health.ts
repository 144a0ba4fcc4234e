import type { Sql } from '../../../store/sql.js';
import { HOUR_MS, hourOf } from '../../../model/time.js';
import { DROP_REASONS, noDrops, type DropReason, type DroppedByReason } from '../../../model/drop-reasons.js';

/**
 * Counts to add to a drain's hour. `dropped` is the failures' total (model/drop-reasons.ts); `seen`
 * and `droppedBy` account for every record that reached the drain (docs/delivery.md).
 */
export interface HourlyIncrement {
  drainId: string;
  h: number;
  delivered: number;
  dropped: number;
  rejected: number;
  seen?: number;
  droppedBy?: Partial<DroppedByReason>;
}

export interface HourlyPoint {
  h: number;
  seen: number;
  delivered: number;
  dropped: number;
  rejected: number;
  droppedByReason: DroppedByReason;
  /** Latency of the hour's delivery attempts (batches and tests); null in an hour without one. */
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
}

export interface DrainHealthFacts {
  hourly: HourlyPoint[];
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastStatusCode: number | null;
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
  scrubHits24h: number;
}

/** The column of each reason's count. */
const REASON_COLUMNS: Record<DropReason, string> = {
  quota: 'drop_quota', horizon: 'drop_horizon', permanent: 'drop_permanent', oversize: 'drop_oversize',
  dead_letter: 'drop_dead_letter', sampling: 'drop_sampling', selector: 'drop_selector',
};
const COUNT_COLUMNS = ['delivered', 'dropped', 'rejected', 'seen', ...DROP_REASONS.map((r) => REASON_COLUMNS[r])];

type HourRow = Record<string, number> & { h: number };

export function createHealthRepo(sql: Sql) {
  return {
    /** Adds counts to the hourly rows; callers aggregate first, so this is one statement per flush. */
    async addHourly(increments: readonly HourlyIncrement[]): Promise<void> {
      if (increments.length === 0) return;
      const columns = ['drain_id', 'h', ...COUNT_COLUMNS];
      const values: unknown[][] = [
        increments.map((i) => i.drainId),
        increments.map((i) => i.h),
        increments.map((i) => i.delivered),
        increments.map((i) => i.dropped),
        increments.map((i) => i.rejected),
        increments.map((i) => i.seen ?? 0),
        ...DROP_REASONS.map((r) => increments.map((i) => i.droppedBy?.[r] ?? 0)),
      ];
      const types = ['text[]', 'int[]', ...COUNT_COLUMNS.map(() => 'int[]')];
      await sql.query(
        `insert into drain_hourly (${columns.join(', ')})
         select * from unnest(${types.map((t, i) => `$${i + 1}::${t}`).join(', ')})
         on conflict (drain_id, h) do update set
           ${COUNT_COLUMNS.map((c) => `${c} = drain_hourly.${c} + excluded.${c}`).join(',\n           ')}`,
        values,
        { prepare: 'drain-hourly-add' },
      );
    },

    /** The 24 points of the read form: oldest first, zero-filled, the newest the current hour. */
    async facts(drainId: string, nowMs = Date.now()): Promise<DrainHealthFacts> {
      const newest = hourOf(nowMs);
      const oldest = newest - 23;
      const [rows, last, stats, latency] = await Promise.all([
        sql.query<HourRow>(
          `select h, ${COUNT_COLUMNS.join(', ')} from drain_hourly where drain_id = $1 and h between $2 and $3`,
          [drainId, oldest, newest],
        ),
        sql.query<{ ok: boolean; started_at: Date; status_code: number | null }>(
          `select distinct on (ok) ok, started_at, status_code from deliveries
           where drain_id = $1 and kind in ('batch', 'test', 'verify')
           order by ok, started_at desc, id desc`,
          [drainId],
        ),
        sql.query<{ p50: number | null; p99: number | null; scrub: number | null }>(
          `select percentile_disc(0.5) within group (order by latency_ms) as p50,
                  percentile_disc(0.99) within group (order by latency_ms) as p99,
                  sum(scrub_hits)::int as scrub
           from deliveries where drain_id = $1 and started_at > $2 and kind in ('batch', 'test')`,
          [drainId, new Date(nowMs - 24 * HOUR_MS).toISOString()],
        ),
        sql.query<{ h: number; p50: number | null; p99: number | null }>(
          `select floor(extract(epoch from started_at) / 3600)::int as h,
                  percentile_disc(0.5) within group (order by latency_ms) as p50,
                  percentile_disc(0.99) within group (order by latency_ms) as p99
           from deliveries where drain_id = $1 and started_at >= $2 and kind in ('batch', 'test') and latency_ms is not null
           group by 1`,
          [drainId, new Date(oldest * HOUR_MS).toISOString()],
        ),
      ]);
      const byHour = new Map(rows.map((r) => [Number(r.h), r]));
      const latencyByHour = new Map(latency.map((r) => [Number(r.h), r]));
      const hourly: HourlyPoint[] = [];
      for (let h = oldest; h <= newest; h++) {
        const r = byHour.get(h);
        const l = latencyByHour.get(h);
        const droppedByReason = noDrops();
        for (const reason of DROP_REASONS) droppedByReason[reason] = r?.[REASON_COLUMNS[reason]] ?? 0;
        hourly.push({
          h, seen: r?.seen ?? 0, delivered: r?.delivered ?? 0, dropped: r?.dropped ?? 0, rejected: r?.rejected ?? 0,
          droppedByReason, p50LatencyMs: l?.p50 ?? null, p99LatencyMs: l?.p99 ?? null,
        });
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
        p99LatencyMs: stats[0]?.p99 ?? null,
        scrubHits24h: stats[0]?.scrub ?? 0,
      };
    },
  };
}

export type HealthRepo = ReturnType<typeof createHealthRepo>;
