/**
 * The platform's own copy of every record (spec 01 part 4.3), partitioned
 * by the record's UTC day so retention is a cheap DROP of whole partitions.
 * Partitions are created ahead by the workers (modules/logs/repository.ts).
 * (ts, id) is the key: a record re-read after a crash is stored once.
 */
export const sql = /* sql */ `
create table agent_logs (
  ts timestamptz not null,
  id text not null,
  org_id text not null,
  agent_id text not null,
  agent_name text not null,
  agent_version text,
  environment text not null,
  source text not null,
  event text not null,
  severity text not null,
  execution_id text not null,
  message text,
  trace_id text,
  span_id text,
  attributes jsonb,
  ingested_at timestamptz not null default now(),
  primary key (ts, id)
) partition by range (ts);
create index agent_logs_agent on agent_logs (org_id, agent_id, ts desc, id desc);
create index agent_logs_org on agent_logs (org_id, ts desc, id desc);
`;
