/**
 * Idempotency keys of the platform API (spec 03: channel sends, workflow
 * starts, template deploys). A key is scoped to a principal and a route; the
 * primary key is what makes one claim of it win when several requests race
 * (insert ... on conflict), never a read before the write. A row is
 * `in_progress` while its owner (`claim_id`) runs the request, then
 * `completed` with the outcome to replay. Past `expires_at` a row counts as
 * absent: the next claim takes it over in the same statement.
 *
 * `body` is the answer's JSON text as sent, not jsonb: a replay answers the
 * same bytes (jsonb would reorder keys).
 */
export const sql = /* sql */ `
create table idempotency_keys (
  scope text not null,
  route text not null,
  key text not null,
  fingerprint text not null,
  state text not null check (state in ('in_progress', 'completed')),
  claim_id text not null,
  status_code integer,
  body text,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  completed_at timestamptz,
  primary key (scope, route, key),
  check (state = 'in_progress' or status_code is not null)
);
create index idempotency_keys_expires on idempotency_keys (expires_at);
`;
