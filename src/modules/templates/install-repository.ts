/** The template_installs table (install-migrations.ts), over the store's connection or a unit of work's transaction. */
import type { Sql } from '../../store/sql.js';
import type { InstallStatus, SetupState } from './state.js';

export interface TriggerState {
  enabled: boolean;
  params?: unknown;
  input?: unknown;
}

/** What an apply made of a request, compared by the next apply (`already_current`). */
export interface Applied {
  version: number;
  seal: string;
  model: string | null;
  envNames: string[];
  personaApplied: boolean;
  /**
   * The digest of the persona this template made the agent's current one (platform-deps.ts
   * PersonaApplyPort.digest), kept until the template applies a persona again; absent when the
   * template never applied one. A different current digest means the agent changed it since.
   */
  personaDigest?: string;
}

export interface InstallRecord {
  templateId: string; agentId: string; orgId: string; installedVersion: number; appliedAgentVersion: string | null;
  allowCreatorUpdates: boolean; status: InstallStatus; lastError: string | null; appliedBy: string; appliedAt: Date;
  installedBy: string; installedAt: Date; manifestSeal: string; triggers: Record<string, TriggerState>;
  /** Sealed; opened only to merge with the next apply's values. */
  sealedEnv: string | null;
  model: string | null; applied: Applied; minted: boolean; setup: SetupState | null;
}

interface Row {
  template_id: string; agent_id: string; org_id: string; installed_version: number; applied_agent_version: string | null;
  allow_creator_updates: boolean; status: InstallStatus; last_error: string | null; applied_by: string; applied_at: Date | string;
  installed_by: string; installed_at: Date | string; manifest_seal: string; triggers: Record<string, TriggerState>; env_values: string | null;
  model: string | null; applied: Applied; minted: boolean; setup: SetupState | null;
}

const recordOf = (r: Row): InstallRecord => ({
  templateId: r.template_id, agentId: r.agent_id, orgId: r.org_id, installedVersion: r.installed_version, appliedAgentVersion: r.applied_agent_version,
  allowCreatorUpdates: r.allow_creator_updates, status: r.status, lastError: r.last_error, appliedBy: r.applied_by, appliedAt: new Date(r.applied_at),
  installedBy: r.installed_by, installedAt: new Date(r.installed_at), manifestSeal: r.manifest_seal, triggers: r.triggers, sealedEnv: r.env_values,
  model: r.model, applied: r.applied, minted: r.minted, setup: r.setup,
});

const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

export function createInstallRepo(sql: Sql) {
  return {
    async get(templateId: string, agentId: string, lock = false): Promise<InstallRecord | undefined> {
      const rows = await sql.query<Row>(`select * from template_installs where template_id = $1 and agent_id = $2${lock ? ' for update' : ''}`, [templateId, agentId]);
      return rows[0] && recordOf(rows[0]);
    },

    /** The installs of an agent, oldest first, with each template's display name and latest versions. */
    async ofAgent(agentId: string): Promise<Array<InstallRecord & { displayName: string; latestVersion: number; latestApprovedVersion: number | null }>> {
      const rows = await sql.query<Row & { display_name: string; latest_version: number; latest_approved_version: number | null }>(
        `select i.*, t.display_name, t.latest_version, t.latest_approved_version from template_installs i join templates t on t.id = i.template_id
         where i.agent_id = $1 order by i.installed_at, i.template_id`,
        [agentId],
      );
      return rows.map((r) => ({ ...recordOf(r), displayName: r.display_name, latestVersion: r.latest_version, latestApprovedVersion: r.latest_approved_version }));
    },

    /**
     * The installs of the template that consented to creator updates and are not at `version`
     * (an archived organization's left out: its agents take no changes), held until the transaction ends, oldest first, each with its agent's version as the kernel records it.
     */
    async consenting(templateId: string, version: number): Promise<Array<InstallRecord & { agentVersion: string | null }>> {
      const rows = await sql.query<Row & { agent_version: string | null }>(
        `select i.*, a.version as agent_version from template_installs i join agents a on a.id = i.agent_id join orgs o on o.id = i.org_id
         where i.template_id = $1 and i.allow_creator_updates and i.installed_version <> $2 and not o.archived
         order by i.installed_at, i.agent_id for update of i`,
        [templateId, version],
      );
      return rows.map((r) => ({ ...recordOf(r), agentVersion: r.agent_version }));
    },

    /** Agents of `orgId` other than `agentId` that have the template installed. */
    async othersInOrg(templateId: string, orgId: string, agentId: string): Promise<string[]> {
      const rows = await sql.query<{ agent_id: string }>('select agent_id from template_installs where template_id = $1 and org_id = $2 and agent_id <> $3', [templateId, orgId, agentId]);
      return rows.map((r) => r.agent_id);
    },

    async upsert(i: InstallRecord): Promise<void> {
      await sql.query(
        `insert into template_installs (template_id, agent_id, org_id, installed_version, applied_agent_version, allow_creator_updates, status, last_error,
           applied_by, applied_at, installed_by, installed_at, manifest_seal, triggers, env_values, model, applied, minted, setup)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14::jsonb,$15,$16,$17::jsonb,$18,$19::jsonb)
         on conflict (template_id, agent_id) do update set installed_version = excluded.installed_version, applied_agent_version = excluded.applied_agent_version,
           allow_creator_updates = excluded.allow_creator_updates, status = excluded.status, last_error = excluded.last_error, applied_by = excluded.applied_by,
           applied_at = excluded.applied_at, manifest_seal = excluded.manifest_seal, triggers = excluded.triggers, env_values = excluded.env_values,
           model = excluded.model, applied = excluded.applied, setup = excluded.setup`,
        [i.templateId, i.agentId, i.orgId, i.installedVersion, i.appliedAgentVersion, i.allowCreatorUpdates, i.status, i.lastError, i.appliedBy,
          i.appliedAt.toISOString(), i.installedBy, i.installedAt.toISOString(), i.manifestSeal, JSON.stringify(i.triggers), i.sealedEnv, i.model,
          JSON.stringify(i.applied), i.minted, json(i.setup)],
      );
    },

    async setStatus(templateId: string, agentId: string, status: InstallStatus, lastError: string | null): Promise<void> {
      await sql.query('update template_installs set status = $3, last_error = $4 where template_id = $1 and agent_id = $2', [templateId, agentId, status, lastError]);
    },

    async setConsent(templateId: string, agentId: string, allow: boolean): Promise<void> {
      await sql.query('update template_installs set allow_creator_updates = $3 where template_id = $1 and agent_id = $2', [templateId, agentId, allow]);
    },

    async setSetup(templateId: string, agentId: string, setup: SetupState | null): Promise<void> {
      await sql.query('update template_installs set setup = $3::jsonb where template_id = $1 and agent_id = $2', [templateId, agentId, json(setup)]);
    },

    /**
     * The savepoint one install's automatic apply runs under (in the publish's transaction), so
     * that a refused apply undoes that apply alone: set, released, or rolled back to.
     */
    async autoApplySavepoint(): Promise<void> {
      await sql.query('savepoint template_auto_apply');
    },
    async releaseAutoApplySavepoint(): Promise<void> {
      await sql.query('release savepoint template_auto_apply');
    },
    async rollbackToAutoApplySavepoint(): Promise<void> {
      await sql.query('rollback to savepoint template_auto_apply');
    },

    /** The agents of the organization the template is installed on. */
    async agentsInstalledIn(templateId: string, orgId: string): Promise<Set<string>> {
      const rows = await sql.query<{ agent_id: string }>('select agent_id from template_installs where template_id = $1 and org_id = $2', [templateId, orgId]);
      return new Set(rows.map((r) => r.agent_id));
    },

    /** The agent an install applies to: its organization and version. */
    async targetAgent(agentId: string): Promise<{ id: string; org_id: string; version: string | null } | undefined> {
      const [agent] = await sql.query<{ id: string; org_id: string; version: string | null }>('select id, org_id, version from agents where id = $1', [agentId]);
      return agent;
    },

    /** The template's row held until the transaction ends (installs of one template then decide one at a time); false when there is none. */
    async lockTemplate(templateId: string): Promise<boolean> {
      const [locked] = await sql.query<{ id: string }>('select id from templates where id = $1 for update', [templateId]);
      return locked !== undefined;
    },

    async remove(templateId: string, agentId: string): Promise<boolean> {
      const rows = await sql.query('delete from template_installs where template_id = $1 and agent_id = $2 returning agent_id', [templateId, agentId]);
      return rows.length > 0;
    },
  };
}

export type InstallRepo = ReturnType<typeof createInstallRepo>;
