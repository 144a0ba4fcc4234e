/** The telephony family's tables (applied by openStore after the store kernel's). */
import type { Migration } from '../../store/migrate.js';

export const telephonyMigrations: readonly Migration[] = [
  {
    id: 'telephony/001-trunks-and-numbers',
    sql: `
create table telephony_sip_trunks (
  id text primary key,
  org_id text not null,
  domain text not null unique,
  host text not null,
  region text not null,
  status text not null,
  tls text not null,
  srtp text not null,
  digest_auth_enabled boolean not null,
  default_agent_id text,
  created_at bigint not null,
  created_by text not null,
  created_by_email text
);
create index telephony_sip_trunks_org on telephony_sip_trunks (org_id, created_at, id);

create table telephony_trunk_acl (
  trunk_id text not null references telephony_sip_trunks (id) on delete cascade,
  ip text not null,
  description text,
  created_at bigint not null,
  seq bigserial not null,
  primary key (trunk_id, ip)
);

-- What a SIP registrar needs to check a digest response: HA1 per algorithm (RFC 7616), sealed.
create table telephony_trunk_digest_users (
  trunk_id text not null references telephony_sip_trunks (id) on delete cascade,
  username text not null,
  realm text not null,
  ha1_md5 text not null,
  ha1_sha256 text not null,
  created_at bigint not null,
  primary key (trunk_id, username)
);

create table telephony_phone_numbers (
  id text primary key,
  org_id text not null,
  msisdn text not null,
  country text not null,
  type text not null,
  capabilities jsonb not null,
  purchased_by text,
  purchased_by_email text,
  status text not null,
  transport text not null,
  ten_dlc_campaign_id text,
  tfn_registration_id text,
  created_at bigint not null,
  released_at bigint
);
-- A number belongs to at most one organization until it is released: two purchases of it race
-- here, and exactly one insert wins.
create unique index telephony_phone_numbers_owned on telephony_phone_numbers (msisdn) where status <> 'released';
create index telephony_phone_numbers_org on telephony_phone_numbers (org_id, created_at, id);
`,
  },
  {
    id: 'telephony/002-rcs-agents-and-voices',
    sql: `
create table telephony_rcs_agents (
  id text primary key,
  org_id text not null,
  -- A carrier sender id is one organization's: two registrations of it race here, one insert wins.
  sender_id text not null constraint telephony_rcs_agents_sender_id_key unique,
  display_name text not null,
  description text,
  logo_url text,
  banner_url text,
  status text not null,
  webhook_url text,
  regions jsonb not null,
  created_by text not null,
  created_by_email text,
  linked_agent_id text,
  created_at bigint not null
);
create index telephony_rcs_agents_org on telephony_rcs_agents (org_id, created_at, id);

create table telephony_voices (
  id text primary key,
  agent_id text not null,
  org_id text not null,
  name text not null,
  description text,
  active boolean not null,
  source text not null,
  active_version text,
  created_by text not null,
  created_at bigint not null,
  updated_at bigint not null,
  seq bigserial not null
);
-- A name is one active voice's per agent; a deactivated voice frees it.
create unique index telephony_voices_active_name on telephony_voices (agent_id, name) where active;
create index telephony_voices_agent on telephony_voices (agent_id, seq);

create table telephony_voice_versions (
  id text primary key,
  voice_id text not null references telephony_voices (id),
  version text not null,
  description text,
  config jsonb not null,
  bundle text,
  created_by text not null,
  created_at bigint not null,
  updated_at bigint not null,
  seq bigserial not null,
  unique (voice_id, version)
);
create index telephony_voice_versions_voice on telephony_voice_versions (voice_id, seq);

-- The voice answering a number's calls (provision-from-config binds it).
alter table telephony_phone_numbers add column voice_id text;
`,
  },
  {
    id: 'telephony/003-dispatch-ledger',
    sql: `
-- Each agent's dispatches of the last 60 seconds (contract telephony T3.4: a sliding window of the
-- dispatches answered 201), and the places reserved by dispatches under way. Rows older than the
-- window are removed by the next dispatch of the agent.
create table telephony_dispatches (
  id text primary key,
  agent_id text not null,
  at bigint not null,
  answered boolean not null default false
);
create index telephony_dispatches_agent on telephony_dispatches (agent_id, at);
`,
  },
];
