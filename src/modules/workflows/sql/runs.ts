/**
 * The statements on runs outside the executor's lease (service.ts, recovery.ts, template-port.ts,
 * wake.ts): inserting a run and its steps, the admission counts, ending a run, cancel requests,
 * recovery of a parked step, a raised budget, erasure, a run moved to another version. Each takes
 * the handle it runs on: a transaction's when the caller holds one.
 */
import type { Sql } from '../../../store/sql.js';
import type { RunRow, StepRow } from '../model.js';
import type { RunStatus } from '../state.js';
import type { Graph } from '../graph.js';

/** The channel executors listen on (executor.ts). */
export const WAKE_CHANNEL = 'logdrain_workflow_runs';

/** Wakes every executor listening on the store's channel. */
export async function notifyRunsWaiting(sql: Sql): Promise<void> {
  await sql.query(`select pg_notify('${WAKE_CHANNEL}', '')`);
}

/** The columns of a new run, in the order of its insert. */
export interface NewRun {
  id: string;
  orgId: string;
  agentId: string;
  workflowId: string | null;
  workflowName: string | null;
  versionId: string | null;
  form: string;
  origin: string;
  status: RunStatus;
  gate: string | null;
  createdBy: string;
  correlationKey: string | null;
  tags: string;
  input: string | null;
  graph: string;
  budget: string;
  createdAt: Date;
  startedAt: Date | null;
  deadlineAt: Date | null;
  batchId: string | null;
  originThreadId: string | null;
  callback: boolean;
  notifyMode: string | null;
  notifyTarget: string | null;
  principal: string | null;
  workspace: string | null;
  stateSeed: string | null;
  trigger: string;
}

/** In `tx`: the run and one pending step row for each of `steps` (JSON text of the graph's steps). */
export async function insertRunWithSteps(tx: Sql, r: NewRun, steps: string): Promise<void> {
  await tx.query(
    `insert into workflow_runs (id, org_id, agent_id, workflow_id, workflow_name, workflow_version_id, form, origin, trigger, status, gate, created_by,
       correlation_key, tags, input, graph, budget, created_at, started_at, updated_at, deadline_at, batch_id,
       origin_thread_id, callback, notify_mode, notify_target, principal, workspace, state_seed)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$28,$9,$10::jsonb,$11,$12,$13::jsonb,$14::jsonb,$15::jsonb,$16::jsonb,$17,$18,$17,$19,$20,
       $21,$22,$23,$24::jsonb,$25::jsonb,$26::jsonb,$27::jsonb)`,
    [r.id, r.orgId, r.agentId, r.workflowId, r.workflowName, r.versionId, r.form, r.origin, r.status,
      r.gate, r.createdBy, r.correlationKey, r.tags,
      r.input, r.graph, r.budget, r.createdAt, r.startedAt,
      r.deadlineAt, r.batchId,
      r.originThreadId, r.callback, r.notifyMode, r.notifyTarget, r.principal,
      r.workspace, r.stateSeed, r.trigger], { prepare: 'wf-insert-run-2' },
  );
  await tx.query(
    `insert into workflow_run_steps (run_id, idx, step_id, kind, status) select $1, i - 1, s->>'id', s->>'kind', 'pending'
     from jsonb_array_elements($2::jsonb) with ordinality as t(s, i)`,
    [r.id, steps], { prepare: 'wf-insert-steps' },
  );
}

/** In `tx`: the organization's admission lock, held until `tx` ends. */
export async function lockOrgAdmissions(tx: Sql, orgId: string): Promise<void> {
  await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`workflows:${orgId}`]);
}

/** The organization's runs queued or running, gated on a quota, suspended; `self` not counted. */
export async function countAdmissions(tx: Sql, orgId: string, self: string | null): Promise<{ active: number; gated: number; suspended: number }> {
  const [c] = await tx.query<{ active: number; gated: number; suspended: number }>(
    `select (count(*) filter (where status in ('queued', 'running')))::int as active,
            (count(*) filter (where status = 'gated' and gate->>'kind' = 'quota'))::int as gated,
            (count(*) filter (where status = 'suspended'))::int as suspended
     from workflow_runs where org_id = $1 and status in ('queued', 'running', 'gated', 'suspended') and id is distinct from $2`,
    [orgId, self], { prepare: 'wf-admission-count-2' },
  );
  return c!;
}

/** Whether the definition has a run not yet terminal. */
export async function hasRunInFlight(tx: Sql, workflowId: string | null): Promise<boolean> {
  const [busy] = await tx.query("select id from workflow_runs where workflow_id = $1 and status not in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned') limit 1", [workflowId]);
  return busy !== undefined;
}

/** The run, held for `tx` when `lock`. */
export async function runById(tx: Sql, runId: string, lock: boolean): Promise<RunRow | undefined> {
  const [r] = await tx.query<RunRow>(`select * from workflow_runs where id = $1${lock ? ' for update' : ''}`, [runId]);
  return r;
}

/** In `tx`: the run's status, held for `tx`. */
export async function lockRunStatus(tx: Sql, runId: string): Promise<RunStatus | undefined> {
  const [locked] = await tx.query<{ status: RunStatus }>('select status from workflow_runs where id = $1 for update', [runId]);
  return locked?.status;
}

/** The cancel request (JSON text) recorded on the run. */
export async function recordCancelRequest(tx: Sql, runId: string, cancel: string): Promise<void> {
  await tx.query('update workflow_runs set cancel = $2::jsonb, updated_at = now() where id = $1', [runId, cancel]);
}

/**
 * The run moved to `to` if it is still in `from` (and, with `leaseOwner`, still held by that
 * executor): lease released, completion and duration recorded; false when it was not.
 */
export async function endRun(sql: Sql, runId: string, from: RunStatus, to: RunStatus, extra: { cancel: string | null; error: string | null; leaseOwner: string | null }): Promise<boolean> {
  const rows = await sql.query(
    `update workflow_runs set status = $2, gate = null, lease_owner = null, lease_until = null, completed_at = now(), updated_at = now(),
       cancel = coalesce($4::jsonb, cancel), error = coalesce($5::jsonb, error),
       duration_ms = (extract(epoch from (now() - coalesce(started_at, created_at))) * 1000)::bigint
     where id = $1 and status = any($3::text[]) and ($6::text is null or lease_owner = $6) returning id`,
    [runId, to, [from], extra.cancel, extra.error, extra.leaseOwner],
    { prepare: 'wf-finish-run' },
  );
  return rows.length > 0;
}

/** The run's running step cancelled and its open attempt closed with outcome `to`. */
export async function closeOpenStep(sql: Sql, runId: string, to: RunStatus): Promise<void> {
  await sql.query("update workflow_run_steps set status = 'cancelled', ended_at = now() where run_id = $1 and status = 'running'", [runId]);
  await sql.query('update workflow_step_attempts set ended_at = now(), outcome = $2 where run_id = $1 and ended_at is null', [runId, to]);
}

/** The run's step with this id. */
export async function stepById(tx: Sql, runId: string, stepId: string): Promise<StepRow | undefined> {
  const [row] = await tx.query<StepRow>('select * from workflow_run_steps where run_id = $1 and step_id = $2', [runId, stepId]);
  return row;
}

/** A parked step made pending again with its retry budget (null: the step's own) and the recovery (JSON text) recorded. */
export async function retryParkedStep(tx: Sql, runId: string, idx: number, retryBudget: number | null, recovery: string): Promise<void> {
  await tx.query(
    `update workflow_run_steps set status = 'pending', retry_budget = $3, recovery = $4::jsonb where run_id = $1 and idx = $2`,
    [runId, idx, retryBudget, recovery],
  );
}

/** The run moved to `status` with its gate lifted. */
export async function ungateRun(tx: Sql, runId: string, status: RunStatus): Promise<void> {
  await tx.query('update workflow_runs set status = $2, gate = null, updated_at = now() where id = $1', [runId, status]);
}

/** A parked step ended failed with the recovery (JSON text) recorded. */
export async function failParkedStep(tx: Sql, runId: string, idx: number, recovery: string): Promise<void> {
  await tx.query("update workflow_run_steps set status = 'failed', ended_at = now(), recovery = $3::jsonb where run_id = $1 and idx = $2", [runId, idx, recovery]);
}

/** A parked step ended `status` (skipped or completed) with its output (JSON text or null) and the recovery recorded. */
export async function endParkedStep(tx: Sql, runId: string, idx: number, status: 'skipped' | 'completed', output: string | null, recovery: string): Promise<void> {
  await tx.query(
    `update workflow_run_steps set status = $3, ended_at = now(), output = $4::jsonb, error = null, recovery = $5::jsonb where run_id = $1 and idx = $2`,
    [runId, idx, status, output, recovery],
  );
}

/** The run moved on past a resolved step to `nextStep`, in `status`, with the run's output when `asOutput`. */
export async function resumePastStep(tx: Sql, runId: string, status: RunStatus, nextStep: number, asOutput: boolean, output: string | null): Promise<void> {
  await tx.query(
    `update workflow_runs set status = $2, gate = null, next_step = $3, updated_at = now(),
             output = case when $4 then $5::jsonb else output end, has_output = has_output or $4 where id = $1`,
    [runId, status, nextStep, asOutput, output],
  );
}

/** The run's raised budget and raises (JSON text), its status and gate, and its deadline from the new duration cap. */
export async function raiseRunBudget(tx: Sql, runId: string, budget: string, raises: string, status: RunStatus, gate: string | null, maxDurationSeconds: number): Promise<void> {
  await tx.query(
    `update workflow_runs set budget = $2::jsonb, budget_raises = $3::jsonb, status = $4, gate = $5::jsonb,
             deadline_at = case when started_at is null then deadline_at else started_at + ($6::int * interval '1 second') end,
             updated_at = now() where id = $1`,
    [runId, budget, raises, status, gate, maxDurationSeconds],
  );
}

/** The run deleted, its steps and step attempts with it (on delete cascade). */
export async function deleteRun(tx: Sql, runId: string): Promise<void> {
  await tx.query('delete from workflow_runs where id = $1', [runId]);
}

/** A run not on its definition's active version, with that version's graph and form. */
export type OutdatedRun = RunRow & { active_version_id: string; active_graph: Graph | null; active_form: 'graph' | 'script' };

/**
 * In `tx`: the agent's runs in one of `statuses` on a version other than their definition's active
 * one (of the definitions named, or all with null), oldest first, held for `tx`.
 */
export async function lockOutdatedRuns(tx: Sql, agentId: string, orgId: string, statuses: readonly string[], names: readonly string[] | null): Promise<OutdatedRun[]> {
  return tx.query<OutdatedRun>(
    `select r.*, d.active_version_id, v.graph as active_graph, d.form as active_form
         from workflow_runs r join workflow_definitions d on d.id = r.workflow_id join workflow_versions v on v.id = d.active_version_id
         where r.agent_id = $1 and r.org_id = $2 and r.status = any($3::text[]) and r.workflow_version_id is distinct from d.active_version_id
           and ($4::text[] is null or d.name = any($4::text[]))
         order by r.created_at, r.id for update of r`,
    [agentId, orgId, statuses, names],
  );
}

/** The run moved to version `versionId` with the graph (JSON text) it now runs. */
export async function moveRunToVersion(tx: Sql, runId: string, versionId: string, graph: string): Promise<void> {
  await tx.query('update workflow_runs set workflow_version_id = $2, graph = $3::jsonb, updated_at = now() where id = $1',
    [runId, versionId, graph]);
}
