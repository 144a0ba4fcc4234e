import type { Sql } from '../../../store/sql.js';

export function createVerificationsRepo(sql: Sql) {
  return {
    async insert(v: { id: string; drainId: string; tokenHash: string; createdAt: Date; expiresAt: Date }): Promise<void> {
      await sql.query(
        'insert into drain_verifications (id, drain_id, token_hash, created_at, expires_at) values ($1,$2,$3,$4,$5)',
        [v.id, v.drainId, v.tokenHash, v.createdAt.toISOString(), v.expiresAt.toISOString()],
      );
    },

    /** Marks the token used; true only the first time and only before it expires (single use). */
    async consume(id: string, now = new Date()): Promise<boolean> {
      const rows = await sql.query(
        `update drain_verifications set used_at = $2 where id = $1 and used_at is null and expires_at > $2 returning id`,
        [id, now.toISOString()],
      );
      return rows.length > 0;
    },

    async countSince(drainId: string, since: Date): Promise<number> {
      return (await this.windowSince(drainId, since)).count;
    },

    /** Attempts since `since` and the oldest of them (when the window frees a place). */
    async windowSince(drainId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
      const rows = await sql.query<{ n: number; oldest: Date | null }>(
        'select count(*)::int as n, min(created_at) as oldest from drain_verifications where drain_id = $1 and created_at > $2',
        [drainId, since.toISOString()],
      );
      return { count: rows[0]?.n ?? 0, oldest: rows[0]?.oldest ?? null };
    },
  };
}

export type VerificationsRepo = ReturnType<typeof createVerificationsRepo>;
