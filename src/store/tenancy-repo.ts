/**
 * Organizations and agents made and removed by the API itself (a template deploy mints an agent,
 * and a personal organization for a caller with none; an uninstall may remove a minted agent).
 * The seed (src/seed/apply.ts) upserts the same tables from a file.
 *
 * The API's credential lookups keep what they read for a moment (kernel/auth.ts,
 * CREDENTIAL_CACHE_MS): every write here moves the tenancy counter (change-epochs.ts) after its
 * statement, so an agent removed is refused at once and one created is found at once by this
 * process. `onChange` is that move; a unit of work passes one that waits for its commit too.
 */
import { newId } from '../model/ids.js';
import type { Sql } from './sql.js';
import { noteTenancyChange } from './change-epochs.js';

export interface NewAgent {
  /** Left out: a fresh `agt_` id. */
  id?: string;
  orgId: string;
  name: string;
  visibility: 'org' | 'private';
  version?: string | null;
  baseAgent?: boolean;
}

export interface CreatedAgent {
  id: string;
  orgId: string;
  name: string;
  visibility: 'org' | 'private';
  version: string | null;
  baseAgent: boolean;
  createdAt: Date;
}

export interface NewOrg {
  /** Left out: a fresh `org_` id. */
  id?: string;
  name: string;
  plan?: 'standard' | 'enterprise';
  /** A user made the organization's `admin` (a personal organization's person). */
  adminUserId?: string;
}

export function createTenancyRepo(sql: Sql, onChange: () => void = noteTenancyChange) {
  return {
    /** Inserts an agent; its organization must exist (the foreign key refuses it otherwise). */
    async createAgent(a: NewAgent): Promise<CreatedAgent> {
      const id = a.id ?? `agt_${newId().toLowerCase()}`;
      const rows = await sql.query<{ created_at: Date }>(
        `insert into agents (id, org_id, name, visibility, version, base_agent) values ($1,$2,$3,$4,$5,$6) returning created_at`,
        [id, a.orgId, a.name, a.visibility, a.version ?? null, a.baseAgent ?? false],
      );
      onChange();
      return {
        id, orgId: a.orgId, name: a.name, visibility: a.visibility, version: a.version ?? null,
        baseAgent: a.baseAgent ?? false, createdAt: new Date(rows[0]!.created_at),
      };
    },

    /**
     * Removes an agent of `orgId`; the families' rows that reference it (their foreign keys say
     * `on delete cascade`) go with it. False when no such agent was there.
     */
    async removeAgent(orgId: string, agentId: string): Promise<boolean> {
      const rows = await sql.query<{ id: string }>('delete from agents where id = $1 and org_id = $2 returning id', [agentId, orgId]);
      onChange();
      return rows.length > 0;
    },

    /** Inserts an organization (and its admin's membership when `adminUserId` names a user). */
    async createOrg(o: NewOrg): Promise<{ id: string; name: string; plan: 'standard' | 'enterprise'; archived: false }> {
      const id = o.id ?? `org_${newId().toLowerCase()}`;
      const plan = o.plan ?? 'standard';
      await sql.query('insert into orgs (id, name, plan, archived) values ($1,$2,$3,false)', [id, o.name, plan]);
      if (o.adminUserId !== undefined) {
        await sql.query(`insert into memberships (user_id, org_id, role) values ($1,$2,'admin')`, [o.adminUserId, id]);
      }
      onChange();
      return { id, name: o.name, plan, archived: false };
    },

    /** The agents of an organization, oldest first (ids and names). */
    async agentsOf(orgId: string): Promise<{ id: string; name: string; visibility: 'org' | 'private' }[]> {
      return sql.query<{ id: string; name: string; visibility: 'org' | 'private' }>(
        'select id, name, visibility from agents where org_id = $1 order by created_at, id',
        [orgId],
      );
    },

    /** The organizations a user is a member of. */
    async membershipsOf(userId: string): Promise<string[]> {
      return (await sql.query<{ org_id: string }>('select org_id from memberships where user_id = $1', [userId])).map((r) => r.org_id);
    },

    async orgExists(orgId: string): Promise<boolean> {
      return (await sql.query('select 1 from orgs where id = $1', [orgId])).length > 0;
    },
  };
}

export type TenancyRepo = ReturnType<typeof createTenancyRepo>;
