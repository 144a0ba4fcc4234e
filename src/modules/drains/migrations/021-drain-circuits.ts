/**
 * Each drain's circuit (docs/delivery.md, "The circuit"): shared by every worker, so one worker's
 * opening stops every worker's live sends to the drain, and one worker alone probes it. A row is
 * made the first time a drain's circuit opens; no row reads as closed. Every move is a conditional
 * update on the state it leaves (open only from closed, claim the probe only from open once its
 * time is up or from a half-open claim whose lease passed, close or reopen only by the probe's
 * owner), so two workers never both make the same move.
 *
 * `drain_circuit_hourly` counts openings by hour (`h`, hours since the epoch) for the drain's
 * health; it is kept apart from `drain_hourly`, which the accountant writes on every flush.
 */
export const sql = /* sql */ `
create table drain_circuits (
  drain_id text primary key,
  state text not null check (state in ('closed', 'open', 'half_open')),
  opened_at timestamptz,
  open_until timestamptz,
  -- Openings since the circuit last closed (a failed probe reopens for longer).
  reopenings integer not null default 0,
  probe_owner text,
  probe_until timestamptz,
  updated_at timestamptz not null default now()
);
create index drain_circuits_not_closed on drain_circuits (state) where state <> 'closed';
create table drain_circuit_hourly (
  drain_id text not null,
  h integer not null,
  openings integer not null default 0,
  primary key (drain_id, h)
);
`;
