/**
 * The marketplace skills tables. `skills_sources` holds the organizations'
 * own (developer) skills, seeded (contract skills, seed file) and listed on
 * the marketplace from there; `skills` the marketplace skills; versions and
 * installs hang off them. Install counters are columns the install routes
 * move with SQL increments in the install's own transaction (never read,
 * then written), so concurrent installs count exactly.
 *
 * `search` is a case-insensitive substring over name, display name and
 * description: `ilike '%term%'`, which a B-tree cannot serve. Trigram GIN
 * indexes (pg_trgm: a trusted extension on Postgres 13 and later, loaded by
 * the embedded store too, src/store/sql.ts) can, so one statement serves
 * both stores.
 */
import type { Migration } from '../../store/migrate.js';

export const skillsMigrations: readonly Migration[] = [
  {
    id: 'skills/001-marketplace',
    sql: /* sql */ `
create extension if not exists pg_trgm;

create table skills_sources (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  name text not null,
  description text not null default ''
);

create table skills (
  id text primary key,
  name text not null,
  display_name text not null,
  description text not null,
  long_description text,
  category text,
  tags jsonb not null default '[]',
  creator_id text not null,
  creator_org_id text references orgs(id) on delete set null,
  ownership_status text not null default 'active' check (ownership_status in ('active', 'quarantined')),
  -- One marketplace skill per source skill: a second listing fails here (SKILL_ALREADY_LISTED).
  source_skill_id text not null unique references skills_sources(id) on delete cascade,
  listed boolean not null default true,
  visibility text not null check (visibility in ('public', 'private')),
  verified boolean not null default false,
  featured boolean not null default false,
  install_count integer not null default 0 check (install_count >= 0),
  active_install_count integer not null default 0 check (active_install_count >= 0),
  icon_url text,
  screenshots jsonb,
  repository_url text,
  documentation_url text,
  listed_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index skills_creator_org on skills (creator_org_id);
create index skills_creator on skills (creator_id);
-- The text \`search\` reads: the three fields joined by a control character, which a search term
-- cannot hold (schemas.ts), so a match never spans two fields. COST: an ILIKE over this text is far
-- dearer than the planner's default for a function call; at the default it scans every row of a
-- table of thousands rather than read the index (docs/benchmarks-api.md). PL/pgSQL is never inlined, so
-- its cost is the one the planner sees (a SQL function with a SET clause is not inlined either, but
-- costs twice as much a call: the setting is saved and restored on every row).
create function skills_search_text(n text, dn text, d text) returns text
  language plpgsql immutable parallel safe cost 100
  as $fn$ begin return n || chr(1) || dn || chr(1) || d; end $fn$;
create index skills_search_trgm on skills using gin (skills_search_text(name, display_name, description) gin_trgm_ops);

create table skills_versions (
  id text primary key,
  skill_id text not null references skills(id) on delete cascade,
  version text not null,
  description text not null,
  changelog text,
  env_vars_metadata jsonb,
  approval_status text not null check (approval_status in ('pending', 'approved', 'rejected')),
  published boolean not null,
  approved_at timestamptz,
  created_by text not null,
  created_at timestamptz not null,
  -- A version string is published once per skill, whatever races (SKILL_VERSION_EXISTS).
  unique (skill_id, version)
);

-- One install of a skill per agent (SKILL_ALREADY_INSTALLED); env values sealed with the store's
-- secret box, as drain header values are.
create table skills_installs (
  skill_id text not null references skills(id) on delete cascade,
  agent_id text not null references agents(id) on delete cascade,
  org_id text not null,
  version text not null,
  env_values text,
  installed_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (skill_id, agent_id)
);
create index skills_installs_agent on skills_installs (agent_id, installed_at);
`,
  },
];
