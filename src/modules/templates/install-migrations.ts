/**
 * Template installs (spec 03 parts 2.5, 4.4): one row per template and agent. A refused install
 * writes none (the install's unit of work holds every write, the other families' included).
 *
 * `env_values` are sealed with the store's secret box, as skill env values are, and never
 * answered. `minted`: the agent was created by a deploy of this template, the only agent an
 * uninstall may remove with it. `applied` is what the last apply made of the request (version,
 * trigger states, model, persona, env names), compared by the next one to answer `already_current`.
 */
import type { Migration } from '../../store/migrate.js';

export const installMigrations: readonly Migration[] = [
  {
    id: 'templates/010-installs',
    sql: /* sql */ `
create table template_installs (
  template_id text not null references templates(id) on delete cascade,
  agent_id text not null references agents(id) on delete cascade,
  org_id text not null,
  installed_version integer not null check (installed_version >= 1),
  applied_agent_version text,
  allow_creator_updates boolean not null default false,
  status text not null check (status in ('installed', 'already_current', 'apply_failed')),
  last_error text,
  applied_by text not null,
  applied_at timestamptz not null,
  installed_by text not null,
  installed_at timestamptz not null,
  -- The seal of the version applied (the manifest's contentHash then).
  manifest_seal text not null,
  -- {key: {enabled, params?, input?}} for every declared trigger of the installed version.
  triggers jsonb not null default '{}',
  env_values text,
  model text,
  applied jsonb not null,
  minted boolean not null default false,
  -- The onInstall hook's outcome: {status: ok | failed, code?, error?, workflowRunId?}.
  setup jsonb,
  primary key (template_id, agent_id)
);
create index template_installs_agent on template_installs (agent_id, installed_at, template_id);
create index template_installs_org on template_installs (template_id, org_id);
`,
  },
];
