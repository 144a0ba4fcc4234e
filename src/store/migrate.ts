import type { Sql } from './sql.js';
import { migrations } from './migrations/index.js';

// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK_KEY = 7_411_993;

/**
 * Applies the migrations not yet applied, in order, each in its own
 * transaction. An advisory lock serializes several workers starting at once.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  return sql.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(
      'create table if not exists schema_migrations (id text primary key, applied_at timestamptz not null default now())',
    );
    const done = new Set((await tx.query<{ id: string }>('select id from schema_migrations')).map((r) => r.id));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.exec(m.sql);
      await tx.query('insert into schema_migrations (id) values ($1)', [m.id]);
      applied.push(m.id);
    }
    return applied;
  });
}
