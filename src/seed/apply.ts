import type { Sql } from '../store/sql.js';
import { hashToken } from '../security/token-hash.js';

/** What a seed file writes, read and checked by seed/seed-file.ts (its SeedFile). */
export interface SeedRows {
  orgs: { id: string; name: string; plan: 'standard' | 'enterprise'; archived: boolean }[];
  users: { id: string; email: string; memberships: { orgId: string; role: string }[] }[];
  agents: { id: string; orgId: string; name: string; visibility: 'org' | 'private'; version: string | null; baseAgent: boolean }[];
  apiKeys: {
    key: string; ownerId: string; orgId: string; scopes: string[] | null; agentGrants: string[];
    status: 'active' | 'suspended' | 'revoked' | 'expired';
  }[];
  sessions: { token: string; userId: string; revoked: boolean }[];
  /** The families' checked arrays, each written by its family's section on the seed's transaction. */
  sections?: { section: { apply(tx: Sql, items: readonly unknown[]): Promise<void> }; items: readonly unknown[] }[];
}

/** Upserts a seed file in one transaction; applying it twice changes nothing. */
export async function applySeed(sql: Sql, seed: SeedRows): Promise<void> {
  await sql.transaction(async (tx) => {
    for (const o of seed.orgs) {
      await tx.query(
        `insert into orgs (id, name, plan, archived) values ($1,$2,$3,$4)
         on conflict (id) do update set name = excluded.name, plan = excluded.plan, archived = excluded.archived`,
        [o.id, o.name, o.plan, o.archived],
      );
    }
    for (const u of seed.users) {
      await tx.query(
        'insert into users (id, email) values ($1,$2) on conflict (id) do update set email = excluded.email',
        [u.id, u.email],
      );
      for (const m of u.memberships) {
        await tx.query(
          `insert into memberships (user_id, org_id, role) values ($1,$2,$3)
           on conflict (user_id, org_id) do update set role = excluded.role`,
          [u.id, m.orgId, m.role],
        );
      }
    }
    for (const a of seed.agents) {
      await tx.query(
        `insert into agents (id, org_id, name, visibility, version, base_agent) values ($1,$2,$3,$4,$5,$6)
         on conflict (id) do update set org_id = excluded.org_id, name = excluded.name,
           visibility = excluded.visibility, version = excluded.version, base_agent = excluded.base_agent`,
        [a.id, a.orgId, a.name, a.visibility, a.version, a.baseAgent],
      );
    }
    for (const k of seed.apiKeys) {
      await tx.query(
        `insert into api_keys (key_hash, owner_id, org_id, scopes, agent_grants, status) values ($1,$2,$3,$4::jsonb,$5::jsonb,$6)
         on conflict (key_hash) do update set owner_id = excluded.owner_id, org_id = excluded.org_id,
           scopes = excluded.scopes, agent_grants = excluded.agent_grants, status = excluded.status`,
        [hashToken(k.key), k.ownerId, k.orgId, k.scopes === null ? null : JSON.stringify(k.scopes), JSON.stringify(k.agentGrants), k.status],
      );
    }
    for (const s of seed.sessions) {
      await tx.query(
        `insert into sessions (token_hash, user_id, revoked) values ($1,$2,$3)
         on conflict (token_hash) do update set user_id = excluded.user_id, revoked = excluded.revoked`,
        [hashToken(s.token), s.userId, s.revoked],
      );
    }
    // The families' own arrays (SeedSection), after the organizations they belong to.
    for (const { section, items } of seed.sections ?? []) await section.apply(tx, items);
  });
}
