/**
 * The durable backlog (ARCHITECTURE invariant 2): shaped records parked for
 * drains that are not delivering (unverified, paused, quota-paused) or are
 * failing, drained in order later. A lease per drain keeps one worker at a
 * time draining it. Daily usage feeds the quota ladder.
 */
export const sql = /* sql */ `
create table drain_backlog (
  id bigserial primary key,
  drain_id text not null,
  org_id text not null,
  resource_json text not null,
  record_json text not null,
  record_id text not null,
  bytes integer not null,
  scrub_hits integer not null default 0,
  enqueued_at timestamptz not null default now()
);
create index drain_backlog_drain on drain_backlog (drain_id, id);

create table drain_leases (
  drain_id text primary key,
  owner text not null,
  until timestamptz not null
);

create table drain_daily_usage (
  drain_id text not null,
  day integer not null,
  events bigint not null default 0,
  bytes bigint not null default 0,
  primary key (drain_id, day)
);
`;
