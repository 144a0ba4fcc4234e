import type { Sql } from './sql.js';
import { keysetAfter, keysetOrder, type KeysetColumn } from './keyset.js';

export interface AuditEntry {
  id: string;
  orgId: string;
  action: string;
  actor: { type: string; id: string };
  targetType: string;
  targetId: string;
  details: Record<string, unknown>;
  at: Date;
}

/** The audit log's keyset sort: newest first, ties by id. */
const AUDIT_SORT: readonly KeysetColumn[] = [{ expr: 'at', cast: 'timestamptz' }, { expr: 'id' }];

/** The audit log's columns, in the order of its inserts' values. */
export const AUDIT_COLUMNS = 'id, org_id, action, actor, target_type, target_id, details, at';
/** Each column's cast in an insert, in AUDIT_COLUMNS' order. */
const COLUMN_CASTS = ['', '', '', '::jsonb', '', '', '::jsonb', ''] as const;
const INSERT_ONE = `insert into audit_log (${AUDIT_COLUMNS}) values (${COLUMN_CASTS.map((cast, c) => `$${c + 1}${cast}`).join(',')})`;

/** An entry's values, in AUDIT_COLUMNS' order: an insert's parameters (and an `auditFrom` entry's). */
export const auditParamsOf = (e: AuditEntry): unknown[] =>
  [e.id, e.orgId, e.action, JSON.stringify(e.actor), e.targetType, e.targetId, JSON.stringify(e.details), e.at.toISOString()];

/**
 * The audit entry of a write made in one statement, as a data-modifying CTE of that statement:
 * `insert into audit_log ... select ... from <source>`, where `source` is the CTE of the write
 * (returning what it wrote): one entry when it wrote its row, none when it wrote nothing. The
 * statement runs outside a transaction, so the write and its entry commit together or not at all,
 * in one round trip, and a row lock the write takes is held for that round trip only. A unit of
 * work's entries go through `tx.audit` instead (unit-of-work.ts; the store's AuditWriter, which
 * tests replace to make an entry's write fail, writes those only). The entry's eight values are
 * parameters `$first` to `$first + 7` (auditParamsOf, in that order). A statement writing several
 * rows, each with its entry, inserts into `audit_log (AUDIT_COLUMNS)` itself.
 */
export function auditFrom(source: string, first: number): string {
  return `insert into audit_log (${AUDIT_COLUMNS}) select ${COLUMN_CASTS.map((cast, c) => `$${first + c}${cast}`).join(', ')} from ${source}`;
}


export function createAuditRepo(sql: Sql) {
  return {
    async insert(e: AuditEntry): Promise<void> {
      await sql.query(INSERT_ONE, auditParamsOf(e), { prepare: 'audit-insert' });
    },

    /**
     * Inside a transaction, its last statement: `entries` in one insert that commits the
     * transaction (Sql.queryThenCommit: on Postgres the COMMIT travels with it).
     */
    async insertThenCommit(entries: readonly AuditEntry[]): Promise<void> {
      if (entries.length === 1) {
        const e = entries[0]!;
        await sql.queryThenCommit(INSERT_ONE, auditParamsOf(e), { prepare: 'audit-insert' });
        return;
      }
      const params = entries.flatMap(auditParamsOf);
      const rows = entries.map((_, i) => `(${COLUMN_CASTS.map((cast, c) => `$${i * COLUMN_CASTS.length + c + 1}${cast}`).join(',')})`);
      await sql.queryThenCommit(`insert into audit_log (${AUDIT_COLUMNS}) values ${rows.join(',')}`, params);
    },

    /**
     * Newest first, keyset-paginated on (at, id). `targetType`: only entries about that kind of
     * thing, filtered here so that a page is full whatever else the organization's log holds.
     */
    async page(
      orgId: string,
      q: { targetType?: string | undefined; action?: string | undefined; targetId?: string | undefined; limit: number; after?: { at: Date; id: string } | undefined },
    ): Promise<AuditEntry[]> {
      const params: unknown[] = [orgId, q.limit];
      let where = 'org_id = $1';
      if (q.targetType) {
        params.push(q.targetType);
        where += ` and target_type = $${params.length}`;
      }
      if (q.action) {
        params.push(q.action);
        where += ` and action = $${params.length}`;
      }
      if (q.targetId) {
        params.push(q.targetId);
        where += ` and target_id = $${params.length}`;
      }
      if (q.after) where += ` and ${keysetAfter(AUDIT_SORT, [q.after.at, q.after.id], 'desc', (v) => `$${params.push(v)}`)}`;
      const rows = await sql.query<{
        id: string; org_id: string; action: string; actor: AuditEntry['actor']; target_type: string;
        target_id: string; details: Record<string, unknown>; at: Date;
      }>(`select * from audit_log where ${where} order by ${keysetOrder(AUDIT_SORT, 'desc')} limit $2`, params);
      return rows.map((r) => ({
        id: r.id, orgId: r.org_id, action: r.action, actor: r.actor, targetType: r.target_type,
        targetId: r.target_id, details: r.details, at: r.at,
      }));
    },

    /** Removes the `keys` of `details` from every entry about one thing (the entries stay). */
    async eraseDetails(orgId: string, targetType: string, targetId: string, keys: readonly string[]): Promise<void> {
      await sql.query(
        `update audit_log set details = details - $4::text[]
         where org_id = $1 and target_type = $2 and target_id = $3 and details ?| $4::text[]`,
        [orgId, targetType, targetId, keys],
      );
    },
  };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
