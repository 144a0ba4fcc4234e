/** The telephony family's reads of the store kernel's tables, shared by its aggregates. */
import type { Sql } from '../../store/sql.js';

/** The email of a user, when the store knows it. */
export async function userEmail(sql: Sql, userId: string): Promise<string | undefined> {
  const rows = await sql.query<{ email: string }>('select email from users where id = $1', [userId]);
  return rows[0]?.email;
}
