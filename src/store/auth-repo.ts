import type { Sql } from './sql.js';

export type KeyStatus = 'active' | 'suspended' | 'revoked' | 'expired';

export interface ApiKeyFacts {
  ownerId: string;
  orgId: string;
  /** `null`: a legacy key acting as its owner. */
  scopes: string[] | null;
  agentGrants: string[];
  status: KeyStatus;
}

export interface SessionFacts {
  userId: string;
  revoked: boolean;
}

export interface AgentFacts {
  id: string;
  orgId: string;
  name: string;
  visibility: 'org' | 'private';
  version: string | null;
}

export interface OrgFacts {
  id: string;
  name: string;
  plan: 'standard' | 'enterprise';
  archived: boolean;
}

export function createAuthRepo(sql: Sql) {
  return {
    async findKey(keyHash: string): Promise<ApiKeyFacts | undefined> {
      const rows = await sql.query<{
        owner_id: string; org_id: string; scopes: string[] | null; agent_grants: string[]; status: KeyStatus;
      }>('select owner_id, org_id, scopes, agent_grants, status from api_keys where key_hash = $1', [keyHash]);
      const r = rows[0];
      return r && { ownerId: r.owner_id, orgId: r.org_id, scopes: r.scopes, agentGrants: r.agent_grants, status: r.status };
    },

    async findSession(tokenHash: string): Promise<SessionFacts | undefined> {
      const rows = await sql.query<{ user_id: string; revoked: boolean }>(
        'select user_id, revoked from sessions where token_hash = $1',
        [tokenHash],
      );
      const r = rows[0];
      return r && { userId: r.user_id, revoked: r.revoked };
    },

    /** Role of a user in an organization, or undefined when not a member. */
    async roleIn(userId: string, orgId: string): Promise<string | undefined> {
      const rows = await sql.query<{ role: string }>(
        'select role from memberships where user_id = $1 and org_id = $2',
        [userId, orgId],
      );
      return rows[0]?.role;
    },

    async org(orgId: string): Promise<OrgFacts | undefined> {
      const rows = await sql.query<OrgFacts>('select id, name, plan, archived from orgs where id = $1', [orgId]);
      return rows[0];
    },

    async agent(agentId: string): Promise<AgentFacts | undefined> {
      const rows = await sql.query<{ id: string; org_id: string; name: string; visibility: 'org' | 'private'; version: string | null }>(
        'select id, org_id, name, visibility, version from agents where id = $1',
        [agentId],
      );
      const r = rows[0];
      return r && { id: r.id, orgId: r.org_id, name: r.name, visibility: r.visibility, version: r.version };
    },

    async privateAgents(orgId: string): Promise<string[]> {
      const rows = await sql.query<{ id: string }>("select id from agents where org_id = $1 and visibility = 'private'", [orgId]);
      return rows.map((r) => r.id);
    },

    /** Ids among `agentIds` that do not belong to `orgId`. */
    async agentsOutsideOrg(orgId: string, agentIds: readonly string[]): Promise<string[]> {
      if (agentIds.length === 0) return [];
      const rows = await sql.query<{ id: string }>(
        'select id from agents where org_id = $1 and id = any($2::text[])',
        [orgId, agentIds],
      );
      const inside = new Set(rows.map((r) => r.id));
      return agentIds.filter((id) => !inside.has(id));
    },

    /** Ids among `agentIds` that the store knows as agents of another organization than `orgId`. */
    async agentsOfOtherOrgs(orgId: string, agentIds: readonly string[]): Promise<string[]> {
      if (agentIds.length === 0) return [];
      const rows = await sql.query<{ id: string }>(
        'select id from agents where org_id <> $1 and id = any($2::text[])',
        [orgId, agentIds],
      );
      return rows.map((r) => r.id);
    },
  };
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
