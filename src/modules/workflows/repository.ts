/** The workflow family's statements. Every status write names the statuses it moves from (state.ts). */
import type { Sql } from '../../store/sql.js';
import { keysetAfter, keysetOrder, type KeysetColumn } from '../../api/kernel/pagination.js';
import type { DefinitionRow, EventRow, NotificationListRow, RunRow, StepRow } from './model.js';
import { DEFAULT_POLICY, type PolicyLimits } from './seed.js';
import type { RunStatus } from './state.js';
import type { Graph, JsonSchema } from './graph.js';
import type { WorkflowRunCounts } from '../platform-deps.js';

export interface VersionRow {
  id: string;
  workflow_id: string;
  input_schema: JsonSchema | null;
  graph: Graph | null;
  script: string | null;
}

export type RunSort = '-createdAt' | 'createdAt' | '-durationMs' | 'durationMs';

export interface RunFilter {
  statuses?: RunStatus[] | undefined;
  workflowId?: string | undefined;
  trigger?: string | undefined;
  updatedSince?: number | undefined;
  batchId?: string | undefined;
  correlationKey?: string | undefined;
  tags?: string[] | undefined;
  minDurationMs?: number | undefined;
  maxDurationMs?: number | undefined;
  sort: RunSort;
  /** The last row of the previous page: its sort value and id. */
  after?: { value: number; id: string } | undefined;
  limit: number;
}

/** The sort value of a row in the cursor (durations of unfinished runs sort as -1). */
export const sortValueOf = (r: RunRow, sort: RunSort): number =>
  sort.endsWith('createdAt') ? r.created_at.getTime() : r.duration_ms === null ? -1 : Number(r.duration_ms);

/** The definitions' keyset sort: last updated first, ties by id. */
const DEFINITION_SORT: readonly KeysetColumn[] = [{ expr: 'd.updated_at', cast: 'timestamptz' }, { expr: 'd.id' }];

/** The runs' keyset sort for `sort`: creation time or duration (unfinished runs as -1) in Unix ms, ties by id. */
const runSortOf = (sort: RunSort): readonly KeysetColumn[] =>
  [{ expr: sort.endsWith('createdAt') ? '(extract(epoch from created_at) * 1000)::bigint' : 'coalesce(duration_ms, -1)', cast: 'bigint' }, { expr: 'id' }];

export function createWorkflowsRepo(sql: Sql) {
  return {
    async listDefinitions(agentId: string, q: { form?: string | undefined; includeComposed: boolean; after?: { at: Date; id: string } | undefined; limit: number }): Promise<DefinitionRow[]> {
      const params: unknown[] = [agentId, q.limit];
      let where = 'd.agent_id = $1';
      if (q.form) where += ` and d.form = $${params.push(q.form)}`;
      if (!q.includeComposed) where += ' and not d.dynamic';
      if (q.after) where += ` and ${keysetAfter(DEFINITION_SORT, [q.after.at, q.after.id], 'desc', (v) => `$${params.push(v)}`)}`;
      return sql.query<DefinitionRow>(
        `select d.*, v.input_schema from workflow_definitions d left join workflow_versions v on v.id = d.active_version_id
         where ${where} order by ${keysetOrder(DEFINITION_SORT, 'desc')} limit $2`,
        params,
      );
    },

    async findDefinition(agentId: string, by: { id?: string | undefined; name?: string | undefined }): Promise<DefinitionRow | undefined> {
      const [d] = by.id !== undefined
        ? await sql.query<DefinitionRow>('select d.*, null as input_schema from workflow_definitions d where d.agent_id = $1 and d.id = $2', [agentId, by.id])
        : await sql.query<DefinitionRow>('select d.*, null as input_schema from workflow_definitions d where d.agent_id = $1 and d.name = $2', [agentId, by.name]);
      return d;
    },

    async version(workflowId: string, versionId: string): Promise<VersionRow | undefined> {
      const [v] = await sql.query<VersionRow>('select id, workflow_id, input_schema, graph, script from workflow_versions where workflow_id = $1 and id = $2', [workflowId, versionId]);
      return v;
    },

    async policy(orgId: string): Promise<PolicyLimits> {
      const [p] = await sql.query<{ max_concurrent_runs: number; max_credits: number; max_steps: number; max_duration_seconds: number; max_job_seconds: number; max_suspended_runs: number }>(
        'select * from workflow_policies where org_id = $1', [orgId],
      );
      return p
        ? {
          maxConcurrentRuns: p.max_concurrent_runs, maxCredits: Number(p.max_credits), maxSteps: p.max_steps, maxDurationSeconds: p.max_duration_seconds, maxJobSeconds: p.max_job_seconds,
          maxSuspendedRuns: p.max_suspended_runs,
        }
        : DEFAULT_POLICY;
    },

    async run(id: string): Promise<RunRow | undefined> {
      const [r] = await sql.query<RunRow>('select * from workflow_runs where id = $1', [id]);
      return r;
    },

    async steps(runIds: readonly string[]): Promise<Map<string, StepRow[]>> {
      const out = new Map<string, StepRow[]>(runIds.map((id) => [id, []]));
      if (runIds.length === 0) return out;
      const rows = await sql.query<StepRow>('select * from workflow_run_steps where run_id = any($1::text[]) order by run_id, idx', [runIds]);
      for (const s of rows) out.get(s.run_id)!.push(s);
      return out;
    },

    /** The run's end notifications, in the order of contract W8 (email, app, target, callback). */
    async notifications(runId: string): Promise<NotificationListRow[]> {
      return sql.query<NotificationListRow>(
        `select kind, channel, recipient, status, delivery_id, error, attempts from workflow_run_notifications where run_id = $1
         order by array_position(array['email', 'app', 'target', 'callback'], kind)`,
        [runId],
      );
    },

    /** The run's events after seq `after`, oldest first. */
    async events(runId: string, after: number, limit: number): Promise<EventRow[]> {
      return sql.query<EventRow>(
        'select seq, kind, at, step_id, attempt, status, code from workflow_run_events where run_id = $1 and seq > $2 order by seq limit $3', [runId, after, limit],
      );
    },

    async listRuns(agentId: string, f: RunFilter): Promise<RunRow[]> {
      const params: unknown[] = [agentId, f.limit];
      const p = (v: unknown) => `$${params.push(v)}`;
      const where = ['agent_id = $1'];
      if (f.statuses) where.push(`status = any(${p(f.statuses)}::text[])`);
      if (f.workflowId !== undefined) where.push(`workflow_id = ${p(f.workflowId)}`);
      if (f.trigger !== undefined) where.push(`trigger = ${p(f.trigger)}`);
      if (f.updatedSince !== undefined) where.push(`updated_at >= ${p(new Date(f.updatedSince).toISOString())}::timestamptz`);
      if (f.batchId !== undefined) where.push(`batch_id = ${p(f.batchId)}`);
      if (f.correlationKey !== undefined) where.push(`correlation_key = ${p(f.correlationKey)}`);
      if (f.tags && f.tags.length > 0) where.push(`tags @> ${p(JSON.stringify(f.tags))}::jsonb`);
      if (f.minDurationMs !== undefined) where.push(`duration_ms >= ${p(f.minDurationMs)}`);
      if (f.maxDurationMs !== undefined) where.push(`duration_ms <= ${p(f.maxDurationMs)}`);
      if (f.minDurationMs !== undefined || f.maxDurationMs !== undefined) where.push("status in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned')");
      const columns = runSortOf(f.sort);
      const direction = f.sort.startsWith('-') ? 'desc' : 'asc';
      if (f.after) where.push(keysetAfter(columns, [f.after.value, f.after.id], direction, p));
      return sql.query<RunRow>(
        `select * from workflow_runs where ${where.join(' and ')} order by ${keysetOrder(columns, direction)} limit $2`,
        params,
      );
    },

    /**
     * The runs that have not ended, for the operator's gauges: counts by status, those waiting for
     * a claim (queued, or running under a lease that ran out) and when the longest-waiting queued
     * run entered `queued` (its last write: a queued run is written again only as it leaves).
     */
    async openRunCounts(): Promise<WorkflowRunCounts> {
      const rows = await sql.query<{ status: string; n: number; claimable: number; oldest: Date | string | null }>(
        `select status, count(*)::int as n,
                count(*) filter (where status = 'queued' or lease_until < now())::int as claimable,
                min(updated_at) filter (where status = 'queued') as oldest
           from workflow_runs where status in ('queued', 'gated', 'running', 'suspended') group by status`,
      );
      const byStatus: Record<string, number> = {};
      let claimable = 0;
      let oldestQueuedAt: Date | null = null;
      for (const r of rows) {
        byStatus[r.status] = r.n;
        claimable += r.claimable;
        if (r.oldest !== null) oldestQueuedAt = new Date(r.oldest);
      }
      return { byStatus, claimable, oldestQueuedAt };
    },
  };
}

export type WorkflowsRepo = ReturnType<typeof createWorkflowsRepo>;
