/**
 * Replays: a time window of the platform copy (agent_logs) sent again through a drain as it is now
 * configured. The API inserts the row (`queued`); a worker claims it for a lease (`lease_owner`,
 * `lease_until`), renewed while it runs, and records after each page the position reached
 * (`position_ts`, `position_id`, the key agent_logs is read in) with what it sent. A worker that
 * stops gives its lease back; one that dies leaves it to pass, and the next worker resumes from
 * the recorded position. Every write of a running replay is conditional on its lease, so two
 * workers never both send from one replay.
 *
 * At most one replay a drain is not ended (queued or running): the partial unique index makes
 * that the database's, whatever two requests race.
 */
export const sql = /* sql */ `
create table drain_replays (
  id text primary key,
  org_id text not null,
  drain_id text not null,
  since timestamptz not null,
  until timestamptz not null,
  status text not null check (status in ('queued', 'running', 'completed', 'cancelled', 'failed')),
  position_ts timestamptz,
  position_id text,
  -- The window's records, counted by the first worker to claim it (null until then).
  records_total bigint,
  records_read bigint not null default 0,
  records_sent bigint not null default 0,
  batches_sent integer not null default 0,
  error text,
  requested_by jsonb not null,
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  ended_at timestamptz
);
create unique index drain_replays_one_open on drain_replays (drain_id) where status in ('queued', 'running');
create index drain_replays_by_drain on drain_replays (drain_id, created_at desc, id desc);
create index drain_replays_open on drain_replays (created_at) where status in ('queued', 'running');
`;
