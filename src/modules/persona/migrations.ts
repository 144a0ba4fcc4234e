/** The persona family's tables. */
import type { Migration } from '../../store/migrate.js';

export const personaMigrations: readonly Migration[] = [
  {
    id: 'persona/001-versions-drafts-presets',
    sql: /* sql */ `
-- Per agent: the next version number (numbers are never reused, discarded drafts included),
-- the version served (never a draft) and the agent's persona configuration.
create table persona_agents (
  agent_id text primary key references agents(id) on delete cascade,
  next_version integer not null default 1,
  current_version integer,
  current_since timestamptz,
  config jsonb not null default '{}'
);

create table persona_versions (
  id text primary key,
  agent_id text not null references agents(id) on delete cascade,
  version integer not null check (version >= 1),
  status text not null check (status in ('draft', 'published')),
  persona jsonb not null,
  config jsonb not null default '{}',
  created_by text not null,
  created_at timestamptz not null default now(),
  -- The agent version that was current when this persona version was made (spec 03 part 9.2).
  agent_version text,
  unique (agent_id, version)
);
-- One draft per agent, whatever races: the second insert fails here.
create unique index persona_one_draft on persona_versions (agent_id) where status = 'draft';

create table persona_presets (
  id text primary key,
  title text not null,
  description text not null,
  config jsonb not null default '{}',
  position integer not null default 0
);
`,
  },
];
