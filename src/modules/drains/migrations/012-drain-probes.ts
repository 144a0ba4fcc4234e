/**
 * Probes: what the API asks a worker to send on a drain's behalf (an ownership
 * verification, a test batch). The API holds no delivery path of its own, so
 * it enqueues here and any worker sends it. A worker claims a row for a lease
 * (`claimed_by`, `claimed_until`), renewing it while the probe runs; a claim
 * whose lease passed (its worker died) is taken by the next worker. The row
 * is deleted once its probe has run: the outcome lives in deliveries and in
 * the drain's `verification`.
 *
 * A verification's single-use token travels sealed (security/secret-box.ts),
 * never in plain text; `drain_verifications` keeps only its hash.
 */
export const sql = /* sql */ `
create table drain_probes (
  id text primary key,
  kind text not null check (kind in ('verify', 'test')),
  org_id text not null,
  drain_id text not null,
  -- test: the batch id the 202 answered; verify: the verification id.
  batch_id text not null,
  sealed_token text,
  -- Who asked: the verify probe's success audit entry names them.
  actor jsonb not null,
  enqueued_at timestamptz not null,
  claimed_by text,
  claimed_until timestamptz,
  claims integer not null default 0,
  check (kind <> 'verify' or sealed_token is not null)
);
create index drain_probes_enqueued on drain_probes (enqueued_at);

create function drain_probe_enqueued() returns trigger language plpgsql as $$
begin
  perform pg_notify('logdrain_probes', '');
  return null;
end
$$;

create trigger drain_probes_enqueued after insert on drain_probes
  for each statement execute function drain_probe_enqueued();
`;
