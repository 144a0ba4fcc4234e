/**
 * The executor's statements (executor.ts): the claim, the lease, each step's attempt, and the
 * housekeeping passes. Every write of a run's progress names the executor (`executorId`) and is
 * conditional on its still holding the run's lease (`leaseMs` from each write). `sql` is the
 * executor's own handle (one that refuses every statement once the executor is dead).
 */
import type { Sql } from '../../../store/sql.js';
import type { RunRow } from '../model.js';
import type { RunStatus } from '../state.js';
import { WAKE_CHANNEL } from './runs.js';

/** A run this executor may take the next step of: its own, running, not cancelled, not past its deadline ($1 run, $2 executor). */
const GOES_ON = "id = $1 and lease_owner = $2 and status = 'running' and cancel is null and (deadline_at is null or deadline_at > now())";

/**
 * The CTE closing the attempt of step `idx` (a parameter) that a dead executor left open, once the
 * statement's `held` CTE holds the run. The statement's step update reads it (`select count(*) from
 * lost`) so that it runs first: the run's event log tells the lost attempt before the new one.
 */
const closeLost = (idx: string) => `lost as (
         update workflow_step_attempts set ended_at = now(), outcome = 'lost'
          where run_id = $1 and idx = ${idx} and ended_at is null and exists (select 1 from held)
          returning attempt)`;

const NON_TERMINAL = (['queued', 'gated', 'running', 'suspended'] as RunStatus[]);

/** What a completed step writes to its run: the next step, the budget, the output when the step gives one. */
export interface StepDone {
  idx: number;
  budget: unknown;
  hasOutput: boolean;
  /** The output as JSON text, or null when the step gives none. */
  kept: string | null;
}

export function executionStatements(sql: Sql, executorId: string, leaseMs: number) {
  const id = executorId;
  const lease = `now() + ${Math.round(leaseMs)} * interval '1 millisecond'`;
  // The hot statements are prepared once per connection; their text holds the lease, so their
  // names do too (executors with other leases may share a pool, as in tests). So are the
  // housekeeping statements every idle executor runs twice a second, which Postgres otherwise
  // parsed and planned each time for more than it spent running them. Not the claim: its
  // `returning *` would break a prepared statement when a later migration adds a column.
  return {
    /** Claims the oldest claimable run (moving from one of `from`), with the status it was taken from and how long it waited there. */
    async claimNextRun(from: readonly RunStatus[]): Promise<(RunRow & { claimed_from: RunStatus; waited_seconds: number }) | undefined> {
      const [r] = await sql.query<RunRow & { claimed_from: RunStatus; waited_seconds: number }>(
        `with next as (
         select q.id, q.status as was, q.updated_at as since from workflow_runs q
          where (q.status = 'queued' and not exists (select 1 from orgs o where o.id = q.org_id and o.archived))
             or (q.status = 'running' and q.lease_until < now())
          order by q.created_at, q.id limit 1 for update of q skip locked)
       update workflow_runs w set status = 'running', gate = null, lease_owner = $1, lease_until = ${lease}, updated_at = now()
         from next where w.id = next.id and w.status = any($2::text[])
       returning w.*, next.was as claimed_from, extract(epoch from (clock_timestamp() - next.since))::float8 as waited_seconds`,
        [id, from],
      );
      return r;
    },

    /** Opens the next attempt of step `idx` (closing one a dead executor left open); undefined when the run is not to go on here. */
    async beginAttempt(runId: string, idx: number): Promise<{ attempt: number; retry_budget: number | null } | undefined> {
      const [s] = await sql.query<{ attempt: number; retry_budget: number | null }>(
        `with held as (
         update workflow_runs set lease_until = ${lease}, updated_at = now()
          where ${GOES_ON}
          returning id),
       ${closeLost('$3')},
       step as (
         update workflow_run_steps set status = 'running', attempt = attempt + 1, started_at = now(), ended_at = null
          where run_id = $1 and idx = $3 and exists (select 1 from held) and (select count(*) from lost) >= 0
          returning attempt, retry_budget),
       recorded as (
         insert into workflow_step_attempts (run_id, idx, attempt, executor, started_at) select $1, $3, attempt, $2, now() from step)
       select attempt, retry_budget from step`,
        [runId, id, idx], { prepare: `wf-begin-attempt-${leaseMs}` },
      );
      return s;
    },

    /** The run's status, lease owner, cancel request and deadline as they are now. */
    async runStanding(runId: string): Promise<{ status: RunStatus; lease_owner: string | null; cancel: unknown; deadline_at: Date | null } | undefined> {
      const [now] = await sql.query<{ status: RunStatus; lease_owner: string | null; cancel: unknown; deadline_at: Date | null }>(
        'select status, lease_owner, cancel, deadline_at from workflow_runs where id = $1', [runId],
      );
      return now;
    },

    /** Renews the lease; undefined when the run is no longer this executor's running run. */
    async renewLease(runId: string): Promise<{ deadline_at: Date | null } | undefined> {
      const [r] = await sql.query<{ deadline_at: Date | null }>(
        `update workflow_runs set lease_until = ${lease} where id = $1 and lease_owner = $2 and status = 'running' returning deadline_at`, [runId, id],
      );
      return r;
    },

    /** Records an instantaneous step as started and completed and moves the run past it; false when the run is not to go on here. */
    async runInstantStep(runId: string, d: StepDone): Promise<boolean> {
      const [r] = await sql.query<{ n: number }>(
        `with held as (
         update workflow_runs set next_step = $3, budget = $4::jsonb, output = case when $5 then $6::jsonb else output end, has_output = has_output or $5,
           lease_until = ${lease}, updated_at = now()
          where ${GOES_ON}
          returning id),
       ${closeLost('$7')},
       step as (
         update workflow_run_steps set status = 'completed', attempt = attempt + 1, started_at = now(), ended_at = now(), output = $6::jsonb, error = null
          where run_id = $1 and idx = $7 and exists (select 1 from held) and (select count(*) from lost) >= 0
          returning attempt),
       recorded as (
         insert into workflow_step_attempts (run_id, idx, attempt, executor, started_at, ended_at, outcome)
         select $1, $7, attempt, $2, now(), now(), 'completed' from step)
       select count(*)::int as n from step`,
        [runId, id, d.idx + 1, JSON.stringify(d.budget), d.hasOutput, d.kept, d.idx], { prepare: `wf-instant-step-${leaseMs}` },
      );
      return r!.n === 1;
    },

    /** Records attempt `attempt` of a step completed and moves the run past it; false when this executor no longer holds the run. */
    async completeStep(runId: string, d: StepDone, attempt: number): Promise<boolean> {
      const [r] = await sql.query<{ n: number }>(
        `with moved as (
         update workflow_runs set next_step = $3, budget = $4::jsonb, output = case when $5 then $6::jsonb else output end, has_output = has_output or $5,
           lease_until = ${lease}, updated_at = now()
          where id = $1 and lease_owner = $2 and status = 'running' returning id),
       step as (
         update workflow_run_steps set status = 'completed', ended_at = now(), output = $6::jsonb, error = null
          where run_id = $1 and idx = $7 and exists (select 1 from moved)),
       attempted as (
         update workflow_step_attempts set ended_at = now(), outcome = 'completed'
          where run_id = $1 and idx = $7 and attempt = $8 and exists (select 1 from moved))
       select count(*)::int as n from moved`,
        [runId, id, d.idx + 1, JSON.stringify(d.budget), d.hasOutput, d.kept, d.idx, attempt], { prepare: `wf-complete-step-${leaseMs}` },
      );
      return r!.n === 1;
    },

    /** In `tx`: the run's status, locked, while this executor holds it running; undefined otherwise. */
    async lockHeldRun(tx: Sql, runId: string): Promise<{ status: RunStatus } | undefined> {
      const [held] = await tx.query<{ status: RunStatus }>(`select status from workflow_runs where id = $1 and lease_owner = $2 and status = 'running' for update`, [runId, id]);
      return held;
    },

    /** In `tx`: a failed attempt recorded, and its step left pending (`park` false) or suspended with its park counted. */
    async recordFailedAttempt(tx: Sql, runId: string, idx: number, attempt: number, error: { code: string; message: string }, park: boolean): Promise<void> {
      await tx.query("update workflow_step_attempts set ended_at = now(), outcome = 'failed' where run_id = $1 and idx = $2 and attempt = $3", [runId, idx, attempt]);
      await tx.query(
        `update workflow_run_steps set status = $3, ended_at = now(), error = $4::jsonb,
           park_seq = park_seq + case when $5 then 1 else 0 end, recovery = case when $5 then null else recovery end where run_id = $1 and idx = $2`,
        [runId, idx, park ? 'suspended' : 'pending', JSON.stringify(error), park]);
    },

    /** In `tx`: the run parked (its lease released) in `status` behind `gate`. */
    async parkRun(tx: Sql, runId: string, status: RunStatus, gate: unknown): Promise<void> {
      await tx.query(
        'update workflow_runs set status = $2, gate = $3::jsonb, lease_owner = null, lease_until = null, updated_at = now() where id = $1',
        [runId, status, JSON.stringify(gate)],
      );
    },

    /** Parks the run on its budget if it may go on here; false when it may not (a cancel or the deadline comes first). */
    async parkOnBudget(runId: string, status: RunStatus, gate: unknown): Promise<boolean> {
      const parked = await sql.query(
        `update workflow_runs set status = $3, gate = $4::jsonb, lease_owner = null, lease_until = null, updated_at = now()
       where ${GOES_ON} returning id`,
        [runId, id, status, JSON.stringify(gate)],
      );
      return parked.length > 0;
    },

    /** Up to 100 runs not ended and past their deadline, earliest deadline first (the partial index workflow_runs_deadline finds them). */
    async lateRuns(): Promise<{ id: string; status: RunStatus }[]> {
      return sql.query<{ id: string; status: RunStatus }>(
        `select id, status from workflow_runs where status in (${NON_TERMINAL.map((x) => `'${x}'`).join(', ')}) and deadline_at < now() order by deadline_at limit 100`,
        [], { prepare: 'wf-late-runs' },
      );
    },

    /** The organizations, not archived, with runs gated on a quota. */
    async orgsGatedOnQuota(): Promise<string[]> {
      const orgs = await sql.query<{ org_id: string }>(
        `select distinct r.org_id from workflow_runs r where r.status = 'gated' and r.gate->>'kind' = 'quota'
         and not exists (select 1 from orgs o where o.id = r.org_id and o.archived)`,
        [], { prepare: 'wf-orgs-gated-on-quota' },
      );
      return orgs.map((r) => r.org_id);
    },

    /** In `tx`: the organization's runs queued or running (`active`) and suspended. */
    async activeAndSuspended(tx: Sql, orgId: string): Promise<{ active: number; suspended: number }> {
      const [{ active, suspended }] = (await tx.query<{ active: number; suspended: number }>(
        `select (count(*) filter (where status in ('queued', 'running')))::int as active, (count(*) filter (where status = 'suspended'))::int as suspended
           from workflow_runs where org_id = $1 and status in ('queued', 'running', 'suspended')`, [orgId],
      )) as [{ active: number; suspended: number }];
      return { active, suspended };
    },

    /** In `tx`: up to `free` of the organization's runs gated on a quota, oldest first, moved to `status` and started; how many. */
    async releaseGated(tx: Sql, orgId: string, free: number, status: RunStatus): Promise<number> {
      const rows = await tx.query(
        `update workflow_runs r set status = $3, gate = null, started_at = now(), updated_at = now(),
             deadline_at = now() + (r.budget->>'maxDurationSeconds')::int * interval '1 second'
           where r.id in (select id from workflow_runs where org_id = $1 and status = 'gated' and gate->>'kind' = 'quota' order by created_at, id limit $2)
           returning r.id`,
        [orgId, free, status],
      );
      return rows.length;
    },

    /** Runs in one of `from` of archived organizations moved to `status` behind `gate`. */
    async gateArchivedOrgsRuns(from: readonly RunStatus[], status: RunStatus, gate: unknown): Promise<void> {
      await sql.query(
        `update workflow_runs r set status = $2, gate = $3::jsonb, updated_at = now()
       where r.org_id in (select o.id from orgs o where o.archived) and r.status = any($1::text[])`,
        [from, status, JSON.stringify(gate)], { prepare: 'wf-gate-archived' },
      );
    },

    /** Runs in one of `from` gated `org_archived` whose organization is no longer archived, moved to `status`. */
    async ungateUnarchivedOrgsRuns(from: readonly RunStatus[], status: RunStatus): Promise<void> {
      await sql.query(
        `update workflow_runs r set status = $2, gate = null, updated_at = now()
       where r.status = any($1::text[]) and r.gate->>'kind' = 'org_archived'
         and not exists (select 1 from orgs o where o.id = r.org_id and o.archived)`,
        [from, status], { prepare: 'wf-ungate-unarchived' },
      );
    },
  };
}

/**
 * On `sql` (the store's own handle: the executor's refuses once stopped): the runs executor
 * `executorId` holds have their leases end now, and executors listening are woken when it held any.
 */
export async function handBackRuns(sql: Sql, executorId: string): Promise<void> {
  const handedBack = await sql.query("update workflow_runs set lease_until = now() where lease_owner = $1 and status = 'running' returning id", [executorId]).catch(() => []);
  if (handedBack.length > 0) await sql.query(`select pg_notify('${WAKE_CHANNEL}', '')`).catch(() => {});
}

export type ExecutionStatements = ReturnType<typeof executionStatements>;
