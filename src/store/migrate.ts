import type { Sql } from './sql.js';
import { migrations } from './migrations/index.js';

/** One schema change; its id never changes once released. A module's ids are prefixed with its name (`telephony/001-trunks`). */
export interface Migration {
  id: string;
  sql: string;
}

// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK_KEY = 7_411_993;

/**
 * Applies the migrations not yet applied, in order: the store kernel's, then the modules' (`extra`,
 * in the order given). An advisory lock serializes several processes starting at once.
 */
export async function migrate(sql: Sql, extra: readonly Migration[] = []): Promise<string[]> {
  return sql.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(
      'create table if not exists schema_migrations (id text primary key, applied_at timestamptz not null default now())',
    );
    const done = new Set((await tx.query<{ id: string }>('select id from schema_migrations')).map((r) => r.id));
    const applied: string[] = [];
    for (const m of [...migrations, ...extra]) {
      if (done.has(m.id)) continue;
      await tx.exec(m.sql);
      await tx.query('insert into schema_migrations (id) values ($1)', [m.id]);
      applied.push(m.id);
    }
    return applied;
  });
}
