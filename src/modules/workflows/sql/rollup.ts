/** The daily rollup's statements (rollup.ts): a definition's runs and failed step attempts by UTC creation day. */
import type { Sql } from '../../../store/sql.js';

export interface RollupDayRow {
  date: string;
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  suspended: number;
  p50: number | null;
  p95: number | null;
  credits: number;
}

/** The definition's runs created from `from` to `to` (ISO times) by UTC creation day, oldest first. */
export async function runsByDay(sql: Sql, workflowId: string, from: string, to: string): Promise<RollupDayRow[]> {
  return sql.query<RollupDayRow>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as date,
         count(*)::int as runs,
         (count(*) filter (where status = 'completed'))::int as completed,
         (count(*) filter (where status in ('failed', 'timed_out', 'abandoned')))::int as failed,
         (count(*) filter (where status = 'cancelled'))::int as cancelled,
         (count(*) filter (where status in ('suspended', 'gated', 'waiting')))::int as suspended,
         percentile_cont(0.5) within group (order by duration_ms) filter (where status in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned')) as p50,
         percentile_cont(0.95) within group (order by duration_ms) filter (where status in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned')) as p95,
         coalesce(sum((budget->'spent'->>'credits')::float8), 0) as credits
       from workflow_runs where workflow_id = $1 and created_at >= $2::timestamptz and created_at <= $3::timestamptz
       group by 1 order by 1`,
    [workflowId, from, to],
  );
}

/** The failed step attempts of those runs, by the runs' UTC creation day. */
export async function stepFailuresByDay(sql: Sql, workflowId: string, from: string, to: string): Promise<{ date: string; n: number }[]> {
  return sql.query<{ date: string; n: number }>(
    `select to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as date, count(*)::int as n
       from workflow_step_attempts a join workflow_runs r on r.id = a.run_id
       where r.workflow_id = $1 and r.created_at >= $2::timestamptz and r.created_at <= $3::timestamptz and a.outcome = 'failed'
       group by 1`,
    [workflowId, from, to],
  );
}
