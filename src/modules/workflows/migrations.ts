/** The workflow family's tables: deployed definitions and versions, organization policies, runs, their steps and step attempts. */
import type { Migration } from '../../store/migrate.js';

export const workflowMigrations: readonly Migration[] = [
  {
    id: 'workflows/001-runtime',
    sql: /* sql */ `
create table workflow_definitions (
  id text primary key,
  agent_id text not null,
  org_id text not null,
  name text not null,
  description text,
  form text not null check (form in ('graph', 'script')),
  dynamic boolean not null default false,
  active_version_id text,
  updated_at timestamptz not null,
  unique (agent_id, name)
);
create index workflow_definitions_agent on workflow_definitions (agent_id, updated_at desc, id desc);

create table workflow_versions (
  id text primary key,
  workflow_id text not null references workflow_definitions (id) on delete cascade,
  position int not null,
  input_schema jsonb,
  graph jsonb,
  script text
);

create table workflow_policies (
  org_id text primary key,
  max_concurrent_runs int not null,
  max_credits double precision not null,
  max_steps int not null,
  max_duration_seconds int not null,
  max_job_seconds int not null
);

create table workflow_runs (
  id text primary key,
  org_id text not null,
  agent_id text not null,
  workflow_id text,
  workflow_name text,
  workflow_version_id text,
  form text not null,
  origin text not null,
  trigger text not null,
  status text not null,
  gate jsonb,
  created_by text not null,
  correlation_key text,
  tags jsonb not null default '[]',
  batch_id text,
  input jsonb,
  output jsonb,
  has_output boolean not null default false,
  -- The steps the run executes, copied from its pinned version (or the inline graph) at start.
  graph jsonb not null,
  budget jsonb not null,
  error jsonb,
  cancel jsonb,
  -- The index of the next step to execute.
  next_step int not null default 0,
  lease_owner text,
  lease_until timestamptz,
  event_seq int not null default 0,
  created_at timestamptz not null,
  started_at timestamptz,
  updated_at timestamptz not null,
  completed_at timestamptz,
  deadline_at timestamptz,
  duration_ms bigint,
  budget_raises jsonb not null default '[]'
);
create index workflow_runs_agent on workflow_runs (agent_id, created_at desc, id desc);
create index workflow_runs_claim on workflow_runs (created_at, id) where status in ('queued', 'running');
create index workflow_runs_gated on workflow_runs (org_id, created_at, id) where status = 'gated';

create table workflow_run_steps (
  run_id text not null references workflow_runs (id) on delete cascade,
  idx int not null,
  step_id text not null,
  kind text not null,
  status text not null,
  attempt int not null default 0,
  output jsonb,
  error jsonb,
  started_at timestamptz,
  ended_at timestamptz,
  -- Automatic retries left to the step after a manual retry (null: the step's own retries).
  retry_budget int,
  -- How many times the step parked the run, and how its last park was recovered ({seq, kind, at, by, outcome}).
  park_seq int not null default 0,
  recovery jsonb,
  primary key (run_id, idx)
);

-- One row per attempt of a step: which executor ran it and how it ended (null while it runs, 'lost'
-- when its executor died and another took the run over).
create table workflow_step_attempts (
  run_id text not null references workflow_runs (id) on delete cascade,
  idx int not null,
  attempt int not null,
  executor text not null,
  started_at timestamptz not null,
  ended_at timestamptz,
  outcome text,
  primary key (run_id, idx, attempt)
);
`,
  },
  {
    id: 'workflows/002-executor-indexes',
    sql: /* sql */ `
-- Executors of other processes learn of a run to pick up at once rather than at their next poll:
-- a run that becomes queued (a start, a recovery, a release from the cap) notifies, and so does a
-- lease handed back at a graceful stop. NOTIFY is sent at commit and collapses repeats of one
-- transaction, so a batch start notifies once.
create function workflow_runs_wake() returns trigger language plpgsql as $$
begin
  perform pg_notify('logdrain_workflow_runs', '');
  return null;
end $$;
create trigger workflow_runs_wake after insert or update of status on workflow_runs
  for each row when (new.status = 'queued') execute function workflow_runs_wake();
-- The executors' pass over runs past their deadline reads only the runs not yet ended.
create index workflow_runs_deadline on workflow_runs (deadline_at) where status in ('queued', 'gated', 'running', 'suspended');
-- A start counts its organization's queued, running and gated runs under the organization's lock:
-- from the runs not yet ended only, not the organization's whole history.
create index workflow_runs_admission on workflow_runs (org_id, status) where status in ('queued', 'running', 'gated');
`,
  },
];
