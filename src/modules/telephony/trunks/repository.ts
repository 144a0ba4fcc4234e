/** SIP trunks, their ACL entries and digest users, over `Sql` (the store's connection or a unit of work's). */
import type { Sql } from '../../../store/sql.js';

export type Region = 'us' | 'eu' | 'ap';
export type TrunkStatus = 'provisioning' | 'active' | 'failed' | 'suspended' | 'deleted';
export type Mode = 'optional' | 'always' | 'never';

export interface TrunkRow {
  id: string;
  orgId: string;
  domain: string;
  host: string;
  region: Region;
  status: TrunkStatus;
  tls: Mode;
  srtp: Mode;
  digestAuthEnabled: boolean;
  defaultAgentId: string | null;
  createdAt: number;
  createdBy: string;
  createdByEmail: string | null;
}

export interface AclEntry {
  ip: string;
  description: string | null;
  createdAt: number;
}

export interface TrunkWithParts extends TrunkRow {
  acl: AclEntry[];
  digestUsers: string[];
}

export interface DigestSecret {
  realm: string;
  /** Sealed HA1 values (store.secretBox). */
  ha1Md5: string;
  ha1Sha256: string;
}

interface Row {
  id: string; org_id: string; domain: string; host: string; region: Region; status: TrunkStatus; tls: Mode; srtp: Mode;
  digest_auth_enabled: boolean; default_agent_id: string | null; created_at: number | string; created_by: string; created_by_email: string | null;
}

const fromRow = (r: Row): TrunkRow => ({
  id: r.id, orgId: r.org_id, domain: r.domain, host: r.host, region: r.region, status: r.status, tls: r.tls, srtp: r.srtp,
  digestAuthEnabled: r.digest_auth_enabled, defaultAgentId: r.default_agent_id, createdAt: Number(r.created_at),
  createdBy: r.created_by, createdByEmail: r.created_by_email,
});

export function trunksRepo(sql: Sql) {
  return {
    async insert(t: TrunkRow, acl: readonly AclEntry[]): Promise<void> {
      await sql.query(
        `insert into telephony_sip_trunks (id, org_id, domain, host, region, status, tls, srtp, digest_auth_enabled, default_agent_id, created_at, created_by, created_by_email)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)`,
        [t.id, t.orgId, t.domain, t.host, t.region, t.status, t.tls, t.srtp, t.digestAuthEnabled, t.defaultAgentId, t.createdAt, t.createdBy, t.createdByEmail],
      );
      for (const a of acl) await this.addAcl(t.id, a);
    },

    /** A trunk of the organization that is not deleted; `lock`: held until the transaction ends. */
    async get(orgId: string, id: string, lock = false): Promise<TrunkRow | undefined> {
      const rows = await sql.query<Row>(
        `select * from telephony_sip_trunks where org_id = $1 and id = $2 and status <> 'deleted'${lock ? ' for update' : ''}`,
        [orgId, id],
      );
      return rows[0] ? fromRow(rows[0]) : undefined;
    },

    /**
     * The organization's trunks that are not deleted, oldest first, with their parts as `withParts`
     * gives them: one statement (the list is read on every request of its route), prepared once
     * per connection on Postgres.
     */
    async listWithParts(orgId: string): Promise<TrunkWithParts[]> {
      const rows = await sql.query<Row & { acl: { ip: string; description: string | null; created_at: number | string }[]; digest_users: string[] }>(
        `select t.*,
           coalesce((select json_agg(json_build_object('ip', a.ip, 'description', a.description, 'created_at', a.created_at) order by a.seq)
                     from telephony_trunk_acl a where a.trunk_id = t.id), '[]') as acl,
           coalesce((select json_agg(u.username order by u.username) from telephony_trunk_digest_users u where u.trunk_id = t.id), '[]') as digest_users
         from telephony_sip_trunks t where t.org_id = $1 and t.status <> 'deleted' order by t.created_at, t.id`,
        [orgId],
        { prepare: 'telephony_trunks_list_with_parts' },
      );
      return rows.map((r) => ({
        ...fromRow(r),
        acl: r.acl.map((a) => ({ ip: a.ip, description: a.description, createdAt: Number(a.created_at) })),
        digestUsers: r.digest_users,
      }));
    },

    /** The trunks with their ACL entries (oldest first) and digest usernames (in name order). */
    async withParts(trunks: readonly TrunkRow[]): Promise<TrunkWithParts[]> {
      if (trunks.length === 0) return [];
      const ids = trunks.map((t) => t.id);
      const acl = await sql.query<{ trunk_id: string; ip: string; description: string | null; created_at: number | string }>(
        'select trunk_id, ip, description, created_at from telephony_trunk_acl where trunk_id = any($1::text[]) order by seq',
        [ids],
      );
      const users = await sql.query<{ trunk_id: string; username: string }>(
        'select trunk_id, username from telephony_trunk_digest_users where trunk_id = any($1::text[]) order by username',
        [ids],
      );
      return trunks.map((t) => ({
        ...t,
        acl: acl.filter((a) => a.trunk_id === t.id).map((a) => ({ ip: a.ip, description: a.description, createdAt: Number(a.created_at) })),
        digestUsers: users.filter((u) => u.trunk_id === t.id).map((u) => u.username),
      }));
    },

    /** Marks the trunk deleted; its ACL entries and digest users go with it. */
    async markDeleted(id: string): Promise<void> {
      await sql.query('delete from telephony_trunk_acl where trunk_id = $1', [id]);
      await sql.query('delete from telephony_trunk_digest_users where trunk_id = $1', [id]);
      await sql.query(`update telephony_sip_trunks set status = 'deleted', default_agent_id = null where id = $1`, [id]);
    },

    async setAgent(id: string, agentId: string | null): Promise<void> {
      await sql.query('update telephony_sip_trunks set default_agent_id = $2 where id = $1', [id, agentId]);
    },

    async acl(trunkId: string): Promise<AclEntry[]> {
      const rows = await sql.query<{ ip: string; description: string | null; created_at: number | string }>(
        'select ip, description, created_at from telephony_trunk_acl where trunk_id = $1 order by seq',
        [trunkId],
      );
      return rows.map((r) => ({ ip: r.ip, description: r.description, createdAt: Number(r.created_at) }));
    },

    async addAcl(trunkId: string, a: AclEntry): Promise<void> {
      await sql.query('insert into telephony_trunk_acl (trunk_id, ip, description, created_at) values ($1,$2,$3,$4)', [trunkId, a.ip, a.description, a.createdAt]);
    },

    async removeAcl(trunkId: string, ip: string): Promise<void> {
      await sql.query('delete from telephony_trunk_acl where trunk_id = $1 and ip = $2', [trunkId, ip]);
    },

    async usernames(trunkId: string): Promise<string[]> {
      const rows = await sql.query<{ username: string }>('select username from telephony_trunk_digest_users where trunk_id = $1 order by username', [trunkId]);
      return rows.map((r) => r.username);
    },

    async insertUser(trunkId: string, username: string, secret: DigestSecret, createdAt: number): Promise<void> {
      await sql.query(
        'insert into telephony_trunk_digest_users (trunk_id, username, realm, ha1_md5, ha1_sha256, created_at) values ($1,$2,$3,$4,$5,$6)',
        [trunkId, username, secret.realm, secret.ha1Md5, secret.ha1Sha256, createdAt],
      );
    },

    /** Replaces a user's secret; false when there is no such user. */
    async replaceSecret(trunkId: string, username: string, secret: DigestSecret): Promise<boolean> {
      const rows = await sql.query(
        'update telephony_trunk_digest_users set realm = $3, ha1_md5 = $4, ha1_sha256 = $5 where trunk_id = $1 and username = $2 returning username',
        [trunkId, username, secret.realm, secret.ha1Md5, secret.ha1Sha256],
      );
      return rows.length > 0;
    },

    async deleteUser(trunkId: string, username: string): Promise<boolean> {
      const rows = await sql.query('delete from telephony_trunk_digest_users where trunk_id = $1 and username = $2 returning username', [trunkId, username]);
      return rows.length > 0;
    },

    /** What a registrar reads to check a digest response (sealed HA1 values). */
    async digestSecret(trunkId: string, username: string): Promise<DigestSecret | undefined> {
      const rows = await sql.query<{ realm: string; ha1_md5: string; ha1_sha256: string }>(
        'select realm, ha1_md5, ha1_sha256 from telephony_trunk_digest_users where trunk_id = $1 and username = $2',
        [trunkId, username],
      );
      return rows[0] ? { realm: rows[0].realm, ha1Md5: rows[0].ha1_md5, ha1Sha256: rows[0].ha1_sha256 } : undefined;
    },
  };
}

export type TrunksRepo = ReturnType<typeof trunksRepo>;
