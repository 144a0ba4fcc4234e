/**
 * The deploy tables of the templates family (ids templates/020 to templates/029).
 *
 * `template_deploys` is both the deploy's record (the poll route) and its durable job: the request
 * mints the agent and inserts the row in one commit, and whichever process's job claims it (a
 * lease, FOR UPDATE SKIP LOCKED) installs the template; a process that dies mid-deploy leaves its
 * lease to run out, and the next claim takes the deploy over. `(key_scope, idempotency_key)` is
 * unique: one deploy per caller and key, whatever races (the idempotency key row decides first).
 *
 * `answer_status` is what every request with the deploy's key answers: 201 when the deploy ended
 * within the answer window from its creation (set by the job as it ends), else 202 (set by the
 * first request, or a retry, once the window passed). Set once, never changed.
 *
 * `request` holds the install body the job applies (env values included): it is never read out.
 */
import type { Migration } from '../../store/migrate.js';

export const deployMigrations: readonly Migration[] = [
  {
    id: 'templates/020-deploys',
    sql: /* sql */ `
create table template_deploys (
  id text primary key,
  org_id text not null,
  template_id text not null,
  version int not null,
  requested_by text not null,
  key_scope text not null,
  idempotency_key text not null,
  agent_id text not null,
  status text not null check (status in ('running', 'succeeded', 'failed', 'rolled_back', 'rollback_pending')),
  stage text not null,
  request jsonb not null,
  result jsonb,
  error jsonb,
  error_status int,
  answer_status int check (answer_status in (201, 202)),
  attempts int not null default 0,
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  ended_at timestamptz,
  unique (key_scope, idempotency_key)
);
create index template_deploys_claim on template_deploys (created_at, id) where status in ('running', 'rollback_pending');
create index template_deploys_agent on template_deploys (agent_id);
`,
  },
  {
    id: 'templates/021-deploy-sessions',
    sql: /* sql */ `
create table template_deploy_sessions (
  user_id text not null,
  template_id text not null,
  version int not null,
  answers jsonb not null default '{}',
  connect_state jsonb not null default '{}',
  idempotency_key text,
  updated_at timestamptz not null,
  primary key (user_id, template_id, version)
);
`,
  },
];
