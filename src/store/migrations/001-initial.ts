/** The first schema: tenants and credentials, drains, deliveries, the embedded queue, dead letters. */
export const sql = /* sql */ `
create table settings (
  name text primary key,
  value text not null
);

create table orgs (
  id text primary key,
  name text not null,
  plan text not null default 'standard',
  archived boolean not null default false
);

create table users (
  id text primary key,
  email text not null
);

create table memberships (
  user_id text not null references users(id) on delete cascade,
  org_id text not null references orgs(id) on delete cascade,
  role text not null,
  primary key (user_id, org_id)
);

create table agents (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  name text not null,
  visibility text not null default 'org',
  version text,
  created_at timestamptz not null default now()
);
create index agents_org on agents (org_id);

-- Credentials are stored as SHA-256 of the presented token, never in plain text.
create table api_keys (
  key_hash text primary key,
  owner_id text not null,
  org_id text not null,
  scopes jsonb,
  agent_grants jsonb not null default '[]',
  status text not null default 'active'
);

create table sessions (
  token_hash text primary key,
  user_id text not null,
  revoked boolean not null default false
);

create table drains (
  id text primary key,
  org_id text not null,
  name text not null,
  type text not null,
  endpoint text,
  site text,
  format text not null,
  -- [{name, value (sealed), last4}]
  headers jsonb not null default '[]',
  secret text,
  previous_secret text,
  rotation_started_at timestamptz,
  rotation_expires_at timestamptz,
  selectors jsonb not null,
  sampling jsonb,
  redact jsonb,
  scrub_rules jsonb,
  state text not null,
  pause_reason text,
  verified_at timestamptz,
  verification jsonb,
  version integer not null default 1,
  created_by jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz
);
create unique index drains_org_name on drains (org_id, name) where deleted_at is null;
create index drains_org on drains (org_id) where deleted_at is null;

create table drain_verifications (
  id text primary key,
  drain_id text not null,
  token_hash text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index drain_verifications_drain on drain_verifications (drain_id, created_at);

create table deliveries (
  id text primary key,
  org_id text not null,
  drain_id text not null,
  batch_id text not null,
  kind text not null,
  attempt integer not null,
  record_count integer,
  bytes integer,
  bytes_compressed integer,
  status_code integer,
  latency_ms integer,
  ok boolean not null,
  error_class text,
  response_excerpt text,
  scrub_hits integer,
  started_at timestamptz not null,
  expires_at timestamptz not null,
  first_record_id text,
  last_record_id text
);
create index deliveries_drain_time on deliveries (drain_id, started_at desc, id desc);
create index deliveries_expiry on deliveries (expires_at);

-- Attempt counts per drain and absolute UTC hour (floor(epoch ms / 3600000)).
create table drain_hourly (
  drain_id text not null,
  h integer not null,
  delivered integer not null default 0,
  dropped integer not null default 0,
  rejected integer not null default 0,
  primary key (drain_id, h)
);

create table dead_letters (
  id bigserial primary key,
  source text not null,
  reason text not null,
  payload text not null,
  received_at timestamptz not null default now()
);

-- The embedded queue: replaces the Kafka topic when KAFKA_BROKERS is unset.
create table ingest_queue (
  seq bigserial primary key,
  org_id text not null,
  payload text not null,
  enqueued_at timestamptz not null default now()
);

create table queue_cursors (
  consumer text primary key,
  seq bigint not null
);

create table audit_log (
  id text primary key,
  org_id text not null,
  action text not null,
  actor jsonb not null,
  target_type text not null,
  target_id text not null,
  details jsonb not null,
  at timestamptz not null
);
create index audit_log_org_time on audit_log (org_id, at desc, id desc);
`;
