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
-- The executors' pass over runs past their deadline reads only the runs not yet ended.
create index workflow_runs_deadline on workflow_runs (deadline_at) where status in ('queued', 'gated', 'running', 'suspended');
-- A start counts its organization's queued, running and gated runs under the organization's lock:
-- from the runs not yet ended only, not the organization's whole history.
create index workflow_runs_admission on workflow_runs (org_id, status) where status in ('queued', 'running', 'gated');
`,
  },
  {
    id: 'workflows/003-run-start-fields',
    sql: /* sql */ `
-- What a start may say beyond the definition and input (spec 03 part 4.3): the thread it came from
-- and whether to call back there, how the run-end summary is to be notified, the customer a run acts
-- for, a workspace override and a state seed. A batch run carries none of them (notify_mode null).
alter table workflow_runs
  add column origin_thread_id text,
  add column callback boolean not null default false,
  add column notify_mode text,
  add column notify_target jsonb,
  add column principal jsonb,
  add column workspace jsonb,
  add column state_seed jsonb;
`,
  },
  {
    id: 'workflows/004-run-events',
    sql: /* sql */ `
-- A run's append-only event log. Triggers write it in the transaction of each move (so no move
-- happens without its event, whichever module makes it), and keep workflow_runs.event_seq at the
-- seq of the run's latest event. step_id, attempt, status and code never hold payloads.
create table workflow_run_events (
  run_id text not null references workflow_runs (id) on delete cascade,
  seq int not null,
  kind text not null,
  at timestamptz not null,
  step_id text,
  attempt int,
  status text,
  code text,
  primary key (run_id, seq)
);

-- Runs started before the log existed: one event saying where each stood, at its eventSeq so far.
insert into workflow_run_events (run_id, seq, kind, at, status)
  select id, greatest(event_seq, 1), 'snapshot', updated_at, status from workflow_runs;
update workflow_runs set event_seq = greatest(event_seq, 1);

-- Appends an event to the run's log and answers its seq. Every writer holds the run's row (each
-- move updates or locks it first), so the seqs of one run are taken one at a time.
create function workflow_run_log(p_run text, p_kind text, p_step text, p_attempt int, p_status text, p_code text) returns int language plpgsql as $$
declare
  s int;
begin
  select coalesce(max(seq), 0) + 1 into s from workflow_run_events where run_id = p_run;
  insert into workflow_run_events (run_id, seq, kind, at, step_id, attempt, status, code) values (p_run, s, p_kind, now(), p_step, p_attempt, p_status, p_code);
  return s;
end
$$;

create function workflow_run_created_seq() returns trigger language plpgsql as $$
begin
  new.event_seq := 1;
  return new;
end
$$;
create trigger workflow_runs_created_seq before insert on workflow_runs for each row execute function workflow_run_created_seq();

create function workflow_run_created() returns trigger language plpgsql as $$
begin
  perform workflow_run_log(new.id, 'created', null, null, new.status, new.gate->>'code');
  return null;
end
$$;
create trigger workflow_runs_created after insert on workflow_runs for each row execute function workflow_run_created();

-- The run's own moves, told apart by what the update changes; event_seq follows the log.
create function workflow_run_moved() returns trigger language plpgsql as $$
declare
  was_terminal boolean := old.status in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned');
  now_terminal boolean := new.status in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned');
begin
  if not was_terminal then
    if jsonb_array_length(new.budget_raises) > jsonb_array_length(old.budget_raises) then
      perform workflow_run_log(new.id, 'budget_raised', null, null, new.status, null);
    end if;
    if new.cancel is not null and old.cancel is null and not now_terminal then
      perform workflow_run_log(new.id, 'cancel_requested', null, null, new.status, null);
    end if;
    if now_terminal then
      perform workflow_run_log(new.id, new.status, new.error->>'stepId', null, new.status, new.error->>'code');
    elsif new.status = 'running' and new.lease_owner is not null and (old.status <> 'running' or new.lease_owner is distinct from old.lease_owner) then
      perform workflow_run_log(new.id, 'started', null, null, new.status, null);
    elsif old.status = 'running' and new.status in ('suspended', 'gated') then
      perform workflow_run_log(new.id, 'parked', new.gate->>'stepId', (new.gate->>'attempt')::int, new.status, coalesce(new.gate->>'code', new.gate->>'kind'));
    elsif old.status = 'gated' and old.gate->>'kind' = 'quota' and new.status = 'queued' then
      perform workflow_run_log(new.id, 'released', null, null, new.status, null);
    elsif old.status in ('suspended', 'gated') and new.status = 'queued' then
      perform workflow_run_log(new.id, 'resumed', null, null, new.status, null);
    end if;
  end if;
  new.event_seq := (select coalesce(max(seq), 0) from workflow_run_events where run_id = new.id);
  return new;
end
$$;
create trigger workflow_runs_moved before update on workflow_runs for each row execute function workflow_run_moved();

-- A step's moves: started (each attempt), completed, failed (retried at once, or parking the run),
-- and a park recovered by a retry or a resolve.
create function workflow_step_moved() returns trigger language plpgsql as $$
declare
  s int;
begin
  if new.recovery is not null and new.recovery is distinct from old.recovery then
    s := workflow_run_log(new.run_id, new.recovery->>'kind', new.step_id,
      case when new.recovery->>'kind' = 'retried' then new.attempt + 1 else new.attempt end, new.status, null);
  elsif new.status = 'running' and (old.status <> 'running' or new.attempt <> old.attempt) then
    s := workflow_run_log(new.run_id, 'step_started', new.step_id, new.attempt, new.status, null);
  elsif new.status = 'completed' and old.status <> 'running' and new.attempt > old.attempt then
    -- An instantaneous step, started and completed in one move.
    perform workflow_run_log(new.run_id, 'step_started', new.step_id, new.attempt, 'running', null);
    s := workflow_run_log(new.run_id, 'step_completed', new.step_id, new.attempt, new.status, null);
  elsif old.status = 'running' and new.status = 'completed' then
    s := workflow_run_log(new.run_id, 'step_completed', new.step_id, new.attempt, new.status, null);
  elsif old.status = 'running' and new.status in ('pending', 'suspended') and new.error is not null then
    s := workflow_run_log(new.run_id, 'step_failed', new.step_id, new.attempt, new.status, new.error->>'code');
  end if;
  if s is not null then
    update workflow_runs set event_seq = s where id = new.run_id;
  end if;
  return null;
end
$$;
create trigger workflow_run_steps_moved after update on workflow_run_steps for each row
  when (old.status is distinct from new.status or old.attempt is distinct from new.attempt or old.recovery is distinct from new.recovery)
  execute function workflow_step_moved();

-- An attempt whose executor died, closed by the executor taking the run over.
create function workflow_attempt_lost() returns trigger language plpgsql as $$
declare
  s int;
begin
  s := workflow_run_log(new.run_id, 'step_lost', (select step_id from workflow_run_steps where run_id = new.run_id and idx = new.idx), new.attempt, null, null);
  update workflow_runs set event_seq = s where id = new.run_id;
  return null;
end
$$;
create trigger workflow_step_attempts_lost after update on workflow_step_attempts for each row
  when (new.outcome = 'lost' and old.outcome is null)
  execute function workflow_attempt_lost();
`,
  },
  {
    id: 'workflows/005-organization-gates',
    sql: /* sql */ `
-- The organization's cap on suspended runs (contract W8).
alter table workflow_policies add column max_suspended_runs int not null default 1000;

-- A start counts the organization's suspended runs too (the suspended cap).
drop index if exists workflow_runs_admission;
create index workflow_runs_admission_2 on workflow_runs (org_id, status) where status in ('queued', 'running', 'gated', 'suspended');

-- A queued run gated (its organization archived: code org_archived) is logged 'gated'; its return
-- to the queue is 004's 'resumed'. A trigger of its own, beside 004's, in the way of the step triggers.
create function workflow_run_gated() returns trigger language plpgsql as $$
declare
  s int;
begin
  s := workflow_run_log(new.id, 'gated', null, null, new.status, coalesce(new.gate->>'code', new.gate->>'kind'));
  update workflow_runs set event_seq = s where id = new.id;
  return null;
end
$$;
create trigger workflow_runs_gated after update on workflow_runs for each row
  when (old.status = 'queued' and new.status = 'gated')
  execute function workflow_run_gated();
`,
  },
  {
    id: 'workflows/006-audit-action-names',
    sql: /* sql */ `
-- Audit actions read <family>.<object>.<past-tense verb> in every family (CONTRACT part 7): the
-- entries written before under the older names are renamed, so one filter finds them all.
update audit_log a set action = r.new_name
from (values
  ('workflow.run.start', 'workflows.run.started'),
  ('workflow.batch.start', 'workflows.batch.started'),
  ('workflow.run.cancel', 'workflows.run.cancelled'),
  ('workflow.step.retry', 'workflows.step.retried'),
  ('workflow.step.resolve', 'workflows.step.resolved'),
  ('workflow.budget.raise', 'workflows.budget.raised'),
  ('workflow.run.erase', 'workflows.run.erased')
) as r(old_name, new_name)
where a.action = r.old_name;
`,
  },
  {
    id: 'workflows/007-run-notifications',
    sql: /* sql */ `
-- A run's end notifications (contract W8): one row per destination, written by a trigger in the
-- transaction that ends the run (so no run ends without them, whichever module ends it), and sent
-- after the commit by the notification senders, which claim pending rows (claimed_by/claimed_until,
-- FOR UPDATE SKIP LOCKED) so that one sender sends each. The pending rows are the outbox; the rest
-- are what the run's full detail lists under notifications. kind: email (the creator's address), app
-- (the in-app record, complete when written), target (notifyTarget), callback (originThreadId).
create table workflow_run_notifications (
  id text primary key,
  run_id text not null references workflow_runs (id) on delete cascade,
  kind text not null check (kind in ('email', 'app', 'target', 'callback')),
  -- email, app, or the channel sent on (null for a callback until its thread's channel is known).
  channel text,
  thread text,
  -- The recipient: the email address, the user id, the thread.
  recipient text,
  status text not null check (status in ('pending', 'sent', 'failed', 'skipped')),
  delivery_id text,
  error jsonb,
  -- Sends tried so far; a pending row is due at next_attempt_at.
  attempts int not null default 0,
  next_attempt_at timestamptz not null,
  claimed_by text,
  claimed_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (run_id, kind)
);
create index workflow_run_notifications_due on workflow_run_notifications (next_attempt_at) where status = 'pending';

create function workflow_run_ended_notify() returns trigger language plpgsql as $$
declare
  base text := 'wfn_' || substr(new.id, 5) || '_';
begin
  if new.notify_mode in ('email', 'emailApp') then
    insert into workflow_run_notifications (id, run_id, kind, channel, status, next_attempt_at, created_at, updated_at)
      values (base || 'email', new.id, 'email', 'email', 'pending', now(), now(), now()) on conflict do nothing;
  end if;
  if new.notify_mode in ('app', 'emailApp') then
    insert into workflow_run_notifications (id, run_id, kind, channel, recipient, status, attempts, next_attempt_at, created_at, updated_at)
      values (base || 'app', new.id, 'app', 'app', new.created_by, 'sent', 1, now(), now(), now()) on conflict do nothing;
  end if;
  if new.notify_target is not null then
    insert into workflow_run_notifications (id, run_id, kind, channel, thread, recipient, status, error, next_attempt_at, created_at, updated_at)
      values (base || 'target', new.id, 'target', new.notify_target->>'channel', new.notify_target->>'threadId', new.notify_target->>'threadId',
        case when new.notify_target->>'channel' = 'teamchat' then 'skipped' else 'pending' end,
        case when new.notify_target->>'channel' = 'teamchat'
          then jsonb_build_object('code', 'channel_not_sendable', 'message', 'teamchat is not a channel the platform sends on') end,
        now(), now(), now()) on conflict do nothing;
  end if;
  if new.callback and new.origin_thread_id is not null then
    insert into workflow_run_notifications (id, run_id, kind, thread, recipient, status, next_attempt_at, created_at, updated_at)
      values (base || 'callback', new.id, 'callback', new.origin_thread_id, new.origin_thread_id, 'pending', now(), now(), now()) on conflict do nothing;
  end if;
  return null;
end
$$;
create trigger workflow_runs_ended_notify after update on workflow_runs for each row
  when (old.status not in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned') and new.status in ('completed', 'failed', 'cancelled', 'timed_out', 'abandoned'))
  execute function workflow_run_ended_notify();
`,
  },
];
