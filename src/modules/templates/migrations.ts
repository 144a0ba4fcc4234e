/**
 * The agent templates tables. `templates` holds the catalog entries,
 * `template_versions` the frozen versions (numbered from 1 per template;
 * `(template_id, version)` is unique so installs and deploys can reference a
 * version by it), `template_reviews` the review queue (a private-to-public
 * visibility change, a published version), which the embedded reviewer
 * decides at once.
 *
 * Ids: this family's migrations are `templates/001` to `templates/009`;
 * installs take `templates/010` and up, deploys `templates/020` and up.
 *
 * Counters (`install_count`, `active_install_count`, `latest_version`) are
 * moved by SQL increments in the changing transaction, never read and then
 * written, so concurrent installs and publishes count exactly.
 */
import type { Migration } from '../../store/migrate.js';

export const templatesMigrations: readonly Migration[] = [
  {
    id: 'templates/001-catalog',
    sql: /* sql */ `
create table templates (
  id text primary key,
  name text not null,
  display_name text not null,
  description text not null default '',
  creator_id text not null,
  creator_org_id text not null references orgs(id) on delete cascade,
  -- The agent frozen into the template; kept as an id when the agent goes (the template stays).
  source_agent_id text,
  -- The source agent when it was a base agent at creation (contract templates): deployability.
  source_base_agent_id text,
  visibility text not null check (visibility in ('public', 'private')),
  pending_visibility text check (pending_visibility in ('public', 'private')),
  listed boolean not null default true,
  first_party boolean not null default false,
  latest_version integer not null default 0 check (latest_version >= 0),
  latest_approved_version integer,
  install_count integer not null default 0 check (install_count >= 0),
  active_install_count integer not null default 0 check (active_install_count >= 0),
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index templates_creator_org on templates (creator_org_id);
-- The catalog list: public listed templates of every organization, newest first.
create index templates_catalog on templates (created_at desc, id desc) where visibility = 'public' and listed;

create table template_versions (
  id text primary key,
  template_id text not null references templates(id) on delete cascade,
  version integer not null check (version >= 1),
  -- The frozen agent snapshot and the unsectioned fields (declared triggers, skills, outcomes, channels, features).
  content jsonb not null,
  env_contract jsonb,
  changelog text,
  source_agent_version integer,
  -- Authored sections, as sent (null: cleared or never set).
  connections jsonb,
  persona_template jsonb,
  trigger_presets jsonb,
  params_meta jsonb,
  on_install jsonb,
  on_uninstall jsonb,
  install_policy jsonb,
  -- seal.ts: the digest of content alone, and the install seal (the manifest's contentHash).
  content_hash text not null check (content_hash ~ '^[0-9a-f]{64}$'),
  manifest_seal text not null check (manifest_seal ~ '^[0-9a-f]{64}$'),
  approval_status text not null check (approval_status in ('pending', 'approved', 'rejected')),
  approval_notes text,
  approved_by text,
  approved_at timestamptz,
  deprecated boolean not null default false,
  deprecated_reason text,
  deprecated_by text,
  deprecated_at timestamptz,
  warnings jsonb,
  reference_eval_run_id text,
  created_by text not null,
  created_at timestamptz not null,
  -- One version per number, whatever races; installs and deploys reference (template_id, version).
  unique (template_id, version)
);

create table template_reviews (
  id text primary key,
  template_id text not null references templates(id) on delete cascade,
  kind text not null check (kind in ('visibility', 'version')),
  -- The version reviewed (kind version) or the visibility asked for (kind visibility).
  version integer,
  visibility text check (visibility in ('public', 'private')),
  status text not null check (status in ('pending', 'approved', 'rejected')),
  requested_by text not null,
  requested_at timestamptz not null,
  decided_by text,
  decided_at timestamptz,
  notes text
);
create index template_reviews_template on template_reviews (template_id, requested_at);
`,
  },
];
