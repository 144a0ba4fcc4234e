/**
 * The persona tables, over `Sql` (the store's connection, or a unit of work's
 * transaction). Agents themselves live in the store kernel's `agents` table:
 * read here, never copied.
 */
import { newId } from '../../model/ids.js';
import type { Sql } from '../../store/sql.js';
import { AUDIT_COLUMNS, type AuditEntry } from '../../store/audit-repo.js';
import type { Persona, PersonaConfig } from '../../vendors/model-provider/port.js';

export type VersionStatus = 'draft' | 'published';

export interface PersonaVersion {
  id: string;
  agentId: string;
  version: number;
  status: VersionStatus;
  persona: Persona;
  config: PersonaConfig;
  createdBy: string;
  createdAt: Date;
  agentVersion: string | null;
}

export interface PersonaAgentState {
  currentVersion: number | null;
  config: PersonaConfig;
}

export interface Preset {
  id: string;
  title: string;
  description: string;
  config: PersonaConfig;
}

interface VersionRow {
  id: string; agent_id: string; version: number; status: VersionStatus; persona: Persona; config: PersonaConfig;
  created_by: string; created_at: Date | string; agent_version: string | null;
}

const COLUMNS = 'id, agent_id, version, status, persona, config, created_by, created_at, agent_version';

const versionOf = (r: VersionRow): PersonaVersion => ({
  id: r.id, agentId: r.agent_id, version: r.version, status: r.status, persona: r.persona, config: r.config ?? {},
  createdBy: r.created_by, createdAt: new Date(r.created_at), agentVersion: r.agent_version,
});

/** A version `insertCurrent` makes current, and its audit entry (`details` are the version's number). */
export interface NewCurrentVersion {
  persona: Persona;
  config?: PersonaConfig | undefined;
  createdBy: string;
  audit: Omit<AuditEntry, 'targetType' | 'targetId' | 'details'>;
}

/** Postgres' unique_violation, on the one-draft index. */
export const isDraftConflict = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: string }).code === '23505' && String((e as { message?: string }).message ?? '').includes('persona_one_draft');

export function createPersonaRepo(sql: Sql) {
  return {
    /** The agent's persona state; an agent nothing was done to yet has no current version and an empty configuration. */
    async state(agentId: string): Promise<PersonaAgentState> {
      const rows = await sql.query<{ current_version: number | null; config: PersonaConfig }>('select current_version, config from persona_agents where agent_id = $1', [agentId]);
      const r = rows[0];
      return { currentVersion: r?.current_version ?? null, config: r?.config ?? {} };
    },

    /**
     * `list` and `state`'s current version in one statement (the list route reads both on every
     * request); the state is read alone only when there is no version to carry it.
     */
    async listWithCurrent(agentId: string, status: VersionStatus | 'all'): Promise<{ versions: PersonaVersion[]; current: number | null }> {
      const rows = await sql.query<VersionRow & { current: number | null }>(
        `select ${COLUMNS}, (select current_version from persona_agents where agent_id = $1) as current
         from persona_versions where agent_id = $1 and ($2 = 'all' or status = $2) order by version desc`,
        [agentId, status],
        { prepare: 'persona_list_with_current' },
      );
      if (rows.length === 0) return { versions: [], current: (await this.state(agentId)).currentVersion };
      return { versions: rows.map(versionOf), current: rows[0]!.current ?? null };
    },

    async get(agentId: string, version: number): Promise<PersonaVersion | undefined> {
      const rows = await sql.query<VersionRow>(`select ${COLUMNS} from persona_versions where agent_id = $1 and version = $2`, [agentId, version]);
      return rows[0] && versionOf(rows[0]);
    },

    async draft(agentId: string): Promise<PersonaVersion | undefined> {
      const rows = await sql.query<VersionRow>(`select ${COLUMNS} from persona_versions where agent_id = $1 and status = 'draft'`, [agentId]);
      return rows[0] && versionOf(rows[0]);
    },

    /**
     * Takes the agent's next version number, holding its row until the transaction ends (so numbers
     * are handed out in order and never twice).
     */
    async takeNumber(agentId: string): Promise<number> {
      const rows = await sql.query<{ taken: number }>(
        `insert into persona_agents (agent_id, next_version) values ($1, 2)
         on conflict (agent_id) do update set next_version = persona_agents.next_version + 1
         returning next_version - 1 as taken`,
        [agentId],
      );
      return rows[0]!.taken;
    },

    /**
     * Takes the agent's next numbers, one for each of `vs` in order, inserts each as a published
     * version, makes the last current and writes each one's audit entry (its details given the
     * version's number), in one statement run on its own: the agent's row, which hands the numbers
     * out in order and never twice, is held for that statement's one round trip only. A version's
     * `config` undefined: the agent's own configuration, as `state` reads it (from the row the
     * statement holds). Answers the versions in the order of `vs`. Outside a transaction only
     * (`sql` the store's connection): the statement is its own.
     */
    async insertCurrent(agentId: string, vs: readonly NewCurrentVersion[]): Promise<PersonaVersion[]> {
      const input = vs.map((v, n) => ({
        n, id: newId(), persona: v.persona, config: v.config ?? null, created_by: v.createdBy,
        audit_id: v.audit.id, org_id: v.audit.orgId, action: v.audit.action, actor: v.audit.actor, at: v.audit.at.toISOString(),
      }));
      const rows = await sql.query<VersionRow>(
        `with input as (
           select * from jsonb_to_recordset($2::jsonb) as r(n integer, id text, persona jsonb, config jsonb, created_by text,
             audit_id text, org_id text, action text, actor jsonb, at timestamptz)
         ), taken as (
           insert into persona_agents (agent_id, next_version, current_version, current_since) values ($1, $3 + 1, $3, now())
           on conflict (agent_id) do update set next_version = persona_agents.next_version + $3,
             current_version = persona_agents.next_version + $3 - 1, current_since = excluded.current_since
           returning next_version - $3 as first, config
         ), created as (
           insert into persona_versions (id, agent_id, version, status, persona, config, created_by, agent_version)
           select input.id, $1, taken.first + input.n, 'published', input.persona, coalesce(input.config, taken.config, '{}'::jsonb),
                  input.created_by, (select version from agents where id = $1)
           from input, taken
           returning ${COLUMNS}
         ), audited as (
           insert into audit_log (${AUDIT_COLUMNS})
           select input.audit_id, input.org_id, input.action, input.actor, 'agent', $1, jsonb_build_object('version', created.version), input.at
           from created join input on input.id = created.id
         )
         select ${COLUMNS} from created`,
        [agentId, JSON.stringify(input), vs.length],
        { prepare: 'persona_insert_current_audited' },
      );
      const byId = new Map(rows.map((r) => [r.id, versionOf(r)]));
      return input.map((v) => byId.get(v.id)!);
    },

    /** Inserts a version; a second draft of the agent fails on the one-draft index (isDraftConflict). */
    async insert(v: { agentId: string; version: number; status: VersionStatus; persona: Persona; config: PersonaConfig; createdBy: string }): Promise<PersonaVersion> {
      const rows = await sql.query<VersionRow>(
        `insert into persona_versions (id, agent_id, version, status, persona, config, created_by, agent_version)
         values ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, (select version from agents where id = $2))
         returning ${COLUMNS}`,
        [newId(), v.agentId, v.version, v.status, JSON.stringify(v.persona), JSON.stringify(v.config), v.createdBy],
      );
      return versionOf(rows[0]!);
    },

    /** Replaces the draft's text and configuration; undefined when the agent has no draft. */
    async replaceDraft(agentId: string, persona: Persona, config: PersonaConfig): Promise<PersonaVersion | undefined> {
      const rows = await sql.query<VersionRow>(
        `update persona_versions set persona = $2::jsonb, config = $3::jsonb
         where agent_id = $1 and status = 'draft' returning ${COLUMNS}`,
        [agentId, JSON.stringify(persona), JSON.stringify(config)],
      );
      return rows[0] && versionOf(rows[0]);
    },

    /** Publishes the draft numbered `version` (its text replaced by `persona`); undefined when that is not the draft. */
    async publishDraft(agentId: string, version: number, persona: Persona): Promise<PersonaVersion | undefined> {
      const rows = await sql.query<VersionRow>(
        `update persona_versions set status = 'published', persona = $3::jsonb
         where agent_id = $1 and version = $2 and status = 'draft' returning ${COLUMNS}`,
        [agentId, version, JSON.stringify(persona)],
      );
      return rows[0] && versionOf(rows[0]);
    },

    /** Deletes the agent's draft; its number stays taken. */
    async discardDraft(agentId: string): Promise<PersonaVersion | undefined> {
      const rows = await sql.query<VersionRow>(`delete from persona_versions where agent_id = $1 and status = 'draft' returning ${COLUMNS}`, [agentId]);
      return rows[0] && versionOf(rows[0]);
    },

    async setCurrent(agentId: string, version: number): Promise<void> {
      await sql.query(
        `insert into persona_agents (agent_id, current_version, current_since) values ($1, $2, now())
         on conflict (agent_id) do update set current_version = excluded.current_version, current_since = excluded.current_since`,
        [agentId, version],
      );
    },

    async setConfig(agentId: string, config: PersonaConfig): Promise<void> {
      await sql.query(
        `insert into persona_agents (agent_id, config) values ($1, $2::jsonb)
         on conflict (agent_id) do update set config = excluded.config`,
        [agentId, JSON.stringify(config)],
      );
    },

    /** The seeded presets, in seed order. */
    async presets(): Promise<Preset[]> {
      return sql.query<Preset>('select id, title, description, config from persona_presets order by position, id');
    },

    async preset(id: string): Promise<Preset | undefined> {
      const rows = await sql.query<Preset>('select id, title, description, config from persona_presets where id = $1', [id]);
      return rows[0];
    },

    /** Upserts seeded presets by id; a preset new to the table goes after the ones there, an updated one keeps its place. */
    async upsertPresets(presets: readonly Preset[]): Promise<void> {
      for (const p of presets) {
        await sql.query(
          `insert into persona_presets (id, title, description, config, position)
           values ($1, $2, $3, $4::jsonb, (select coalesce(max(position), 0) + 1 from persona_presets))
           on conflict (id) do update set title = excluded.title, description = excluded.description, config = excluded.config`,
          [p.id, p.title, p.description, JSON.stringify(p.config)],
        );
      }
    },
  };
}

export type PersonaRepo = ReturnType<typeof createPersonaRepo>;
