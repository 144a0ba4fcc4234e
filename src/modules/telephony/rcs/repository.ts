/** RCS agents (sender records) over `Sql`. A sender id is unique across organizations (a constraint). */
import type { Sql } from '../../../store/sql.js';

export interface RcsAgentRow {
  id: string;
  orgId: string;
  senderId: string;
  displayName: string;
  description: string | null;
  logoUrl: string | null;
  bannerUrl: string | null;
  status: string;
  webhookUrl: string | null;
  regions: string[];
  createdBy: string;
  createdByEmail: string | null;
  linkedAgentId: string | null;
  createdAt: number;
}

interface Row {
  id: string; org_id: string; sender_id: string; display_name: string; description: string | null; logo_url: string | null;
  banner_url: string | null; status: string; webhook_url: string | null; regions: string[]; created_by: string;
  created_by_email: string | null; linked_agent_id: string | null; created_at: number | string;
}

const fromRow = (r: Row): RcsAgentRow => ({
  id: r.id, orgId: r.org_id, senderId: r.sender_id, displayName: r.display_name, description: r.description, logoUrl: r.logo_url,
  bannerUrl: r.banner_url, status: r.status, webhookUrl: r.webhook_url, regions: r.regions, createdBy: r.created_by,
  createdByEmail: r.created_by_email, linkedAgentId: r.linked_agent_id, createdAt: Number(r.created_at),
});

/** The fields PATCH may change. */
export type RcsAgentChanges = Partial<Pick<RcsAgentRow, 'displayName' | 'description' | 'logoUrl' | 'bannerUrl' | 'status' | 'webhookUrl' | 'regions'>>;

const COLUMNS: Record<keyof RcsAgentChanges, string> = {
  displayName: 'display_name', description: 'description', logoUrl: 'logo_url', bannerUrl: 'banner_url', status: 'status', webhookUrl: 'webhook_url', regions: 'regions',
};

/** Whether `e` is the unique violation of the sender id constraint. */
export const isSenderTaken = (e: unknown): boolean => {
  const err = e as { code?: string; constraint?: string; message?: string };
  return err.code === '23505' && (err.constraint === 'telephony_rcs_agents_sender_id_key' || (err.message ?? '').includes('telephony_rcs_agents_sender_id_key'));
};

export function rcsRepo(sql: Sql) {
  return {
    /** Throws the unique violation (isSenderTaken) when the sender id is registered already. */
    async insert(a: RcsAgentRow): Promise<void> {
      await sql.query(
        `insert into telephony_rcs_agents (id, org_id, sender_id, display_name, description, logo_url, banner_url, status, webhook_url, regions, created_by, created_by_email, linked_agent_id, created_at)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10::jsonb,$11,$12,$13,$14)`,
        [a.id, a.orgId, a.senderId, a.displayName, a.description, a.logoUrl, a.bannerUrl, a.status, a.webhookUrl, JSON.stringify(a.regions), a.createdBy, a.createdByEmail, a.linkedAgentId, a.createdAt],
      );
    },

    /** The organization's RCS agent `id` (suspended ones included); `lock`: held until the transaction ends. */
    async get(orgId: string, id: string, lock = false): Promise<RcsAgentRow | undefined> {
      const rows = await sql.query<Row>(`select * from telephony_rcs_agents where org_id = $1 and id = $2${lock ? ' for update' : ''}`, [orgId, id]);
      return rows[0] ? fromRow(rows[0]) : undefined;
    },

    async update(id: string, changes: RcsAgentChanges): Promise<void> {
      const sets: string[] = [];
      const params: unknown[] = [id];
      for (const [field, value] of Object.entries(changes) as [keyof RcsAgentChanges, unknown][]) {
        if (value === undefined) continue;
        params.push(field === 'regions' ? JSON.stringify(value) : value);
        sets.push(`${COLUMNS[field]} = $${params.length}${field === 'regions' ? '::jsonb' : ''}`);
      }
      if (sets.length > 0) await sql.query(`update telephony_rcs_agents set ${sets.join(', ')} where id = $1`, params);
    },

    async setLinkedAgent(id: string, agentId: string | null): Promise<void> {
      await sql.query('update telephony_rcs_agents set linked_agent_id = $2 where id = $1', [id, agentId]);
    },

    /** A page of the organization's RCS agents (oldest first) and how many match the filter in all. */
    async page(orgId: string, status: string | undefined, limit: number, offset: number): Promise<{ agents: RcsAgentRow[]; total: number }> {
      const params: unknown[] = [orgId];
      let where = 'org_id = $1';
      if (status !== undefined) {
        params.push(status);
        where += ` and status = $${params.length}`;
      }
      const total = await sql.query<{ n: number }>(`select count(*)::int as n from telephony_rcs_agents where ${where}`, params);
      const rows = await sql.query<Row>(
        `select * from telephony_rcs_agents where ${where} order by created_at, id limit $${params.length + 1} offset $${params.length + 2}`,
        [...params, limit, offset],
      );
      return { agents: rows.map(fromRow), total: Number(total[0]?.n ?? 0) };
    },
  };
}
