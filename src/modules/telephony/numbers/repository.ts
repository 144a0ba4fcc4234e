/** Phone numbers an organization owns, over `Sql`. A number is owned until it is released (unique index). */
import type { Sql } from '../../../store/sql.js';

export type NumberStatus = 'active' | 'suspended' | 'released';
export type NumberTransport = 'carrier-a' | 'carrier-b' | 'byo-sip';

export interface PhoneNumberRow {
  id: string;
  orgId: string;
  msisdn: string;
  country: string;
  type: string;
  capabilities: string[];
  purchasedBy: string | null;
  purchasedByEmail: string | null;
  status: NumberStatus;
  transport: NumberTransport;
  tenDlcCampaignId: string | null;
  tfnRegistrationId: string | null;
  createdAt: number;
}

interface Row {
  id: string; org_id: string; msisdn: string; country: string; type: string; capabilities: string[]; purchased_by: string | null;
  purchased_by_email: string | null; status: NumberStatus; transport: NumberTransport; ten_dlc_campaign_id: string | null;
  tfn_registration_id: string | null; created_at: number | string;
}

const fromRow = (r: Row): PhoneNumberRow => ({
  id: r.id, orgId: r.org_id, msisdn: r.msisdn, country: r.country, type: r.type, capabilities: r.capabilities,
  purchasedBy: r.purchased_by, purchasedByEmail: r.purchased_by_email, status: r.status, transport: r.transport,
  tenDlcCampaignId: r.ten_dlc_campaign_id, tfnRegistrationId: r.tfn_registration_id, createdAt: Number(r.created_at),
});

export interface NumberFilter {
  status?: NumberStatus | undefined;
  country?: string | undefined;
  transport?: NumberTransport | undefined;
}

/** `e` is the refusal of a number some organization owns already (the owned-numbers index; insert). */
export const isNumberTaken = (e: unknown): boolean => {
  const err = e as { code?: string; constraint?: string; message?: string };
  return err.code === '23505' && (err.constraint === 'telephony_phone_numbers_owned' || (err.message ?? '').includes('telephony_phone_numbers_owned'));
};

export function numbersRepo(sql: Sql) {
  return {
    /** Throws the store's unique violation (isNumberTaken) when the number is owned already. */
    async insert(n: PhoneNumberRow): Promise<void> {
      await sql.query(
        `insert into telephony_phone_numbers (id, org_id, msisdn, country, type, capabilities, purchased_by, purchased_by_email, status, transport, ten_dlc_campaign_id, tfn_registration_id, created_at)
         values ($1,$2,$3,$4,$5,$6::jsonb,$7,$8,$9,$10,$11,$12,$13)`,
        [n.id, n.orgId, n.msisdn, n.country, n.type, JSON.stringify(n.capabilities), n.purchasedBy, n.purchasedByEmail, n.status, n.transport, n.tenDlcCampaignId, n.tfnRegistrationId, n.createdAt],
      );
    },

    /** The organization's number `msisdn` unless released; `lock`: held until the transaction ends. */
    async get(orgId: string, msisdn: string, lock = false): Promise<PhoneNumberRow | undefined> {
      const rows = await sql.query<Row>(
        `select * from telephony_phone_numbers where org_id = $1 and msisdn = $2 and status <> 'released'${lock ? ' for update' : ''}`,
        [orgId, msisdn],
      );
      return rows[0] ? fromRow(rows[0]) : undefined;
    },

    async setStatus(id: string, status: NumberStatus, at: number): Promise<void> {
      await sql.query(`update telephony_phone_numbers set status = $2, released_at = case when $2 = 'released' then $3::bigint else released_at end where id = $1`, [id, status, at]);
    },

    /** Whether the organization owns `msisdn` and it is active. */
    async ownsActive(orgId: string, msisdn: string): Promise<boolean> {
      const owned = await sql.query(`select 1 from telephony_phone_numbers where org_id = $1 and msisdn = $2 and status = 'active'`, [orgId, msisdn]);
      return owned.length > 0;
    },

    /** The seed's number written: inserted, or (by msisdn, unless released) given the seed's organization and attributes. */
    async upsertSeeded(n: { orgId: string; msisdn: string; country: string; type: string; capabilities: readonly string[]; status: string; transport: string }, id: string, at: number): Promise<void> {
      await sql.query(
        `insert into telephony_phone_numbers (id, org_id, msisdn, country, type, capabilities, status, transport, created_at)
         values ($1,$2,$3,$4,$5,$6::jsonb,$7,$8,$9)
         on conflict (msisdn) where status <> 'released' do update set org_id = excluded.org_id, country = excluded.country,
           type = excluded.type, capabilities = excluded.capabilities, status = excluded.status, transport = excluded.transport`,
        [id, n.orgId, n.msisdn, n.country, n.type, JSON.stringify(n.capabilities), n.status, n.transport, at],
      );
    },

    /** Which of `msisdns` some organization owns (active or suspended). */
    async owned(msisdns: readonly string[]): Promise<Set<string>> {
      if (msisdns.length === 0) return new Set();
      // Asked on every number search: planned once per connection.
      const rows = await sql.query<{ msisdn: string }>(
        `select msisdn from telephony_phone_numbers where msisdn = any($1::text[]) and status <> 'released'`, [msisdns], { prepare: 'telephony_numbers_owned' },
      );
      return new Set(rows.map((r) => r.msisdn));
    },

    /** A page of the organization's numbers (oldest first) and how many match in all; released ones only when asked for. */
    async page(orgId: string, f: NumberFilter, limit: number, offset: number): Promise<{ numbers: PhoneNumberRow[]; total: number }> {
      const params: unknown[] = [orgId];
      let where = 'org_id = $1';
      if (f.status) {
        params.push(f.status);
        where += ` and status = $${params.length}`;
      } else {
        where += ` and status <> 'released'`;
      }
      if (f.country) {
        params.push(f.country);
        where += ` and country = $${params.length}`;
      }
      if (f.transport) {
        params.push(f.transport);
        where += ` and transport = $${params.length}`;
      }
      const total = await sql.query<{ n: number }>(`select count(*)::int as n from telephony_phone_numbers where ${where}`, params);
      const rows = await sql.query<Row>(
        `select * from telephony_phone_numbers where ${where} order by created_at, id limit $${params.length + 1} offset $${params.length + 2}`,
        [...params, limit, offset],
      );
      return { numbers: rows.map(fromRow), total: Number(total[0]?.n ?? 0) };
    },
  };
}
