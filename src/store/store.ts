/**
 * The store: one SQL connection (PGlite or Postgres) and the repositories
 * written against it. Opening it applies migrations.
 */
import { randomBytes } from 'node:crypto';
import { openSql, type Sql } from './sql.js';
import { withStoreErrorsMarked } from './unavailable.js';
import { migrate, type Migration } from './migrate.js';
import { createQueueRepo } from './queue-repo.js';
import { createLogsRepo } from '../modules/logs/repository.js';
import { insertAudit, type AuditWriter } from './unit-of-work.js';
import { composeKernelStore } from './kernel.js';
import { createDrainTables, createDrainUnitOfWork } from '../modules/drains/tables/index.js';
import { createSecretBox, type SecretBox } from '../security/secret-box.js';

export interface StoreOptions {
  databaseUrl?: string | undefined;
  dataDir?: string;
  encryptionKey?: Buffer | undefined;
  maxConnections?: number;
  /** How a unit of work writes an audit entry (unit-of-work.ts); tests replace it to make that write fail. */
  auditWriter?: AuditWriter | undefined;
  /** The route modules' own tables (src/modules/index.ts), applied after the store kernel's. */
  migrations?: readonly Migration[];
}

export async function openStore(options: StoreOptions) {
  // The store's own errors are told from others that look alike (unavailable.ts).
  const sql = withStoreErrorsMarked(await openSql(options));
  try {
    await migrate(sql, options.migrations);
    const secretBox = createSecretBox(options.encryptionKey ?? (await storedKey(sql)));
    return composeStore(sql, secretBox, options.auditWriter ?? insertAudit);
  } catch (e) {
    await sql.close().catch(() => {});
    throw e;
  }
}

/**
 * The whole store, for the delivery engine, the composition roots and the tests: the kernel
 * (kernel.ts), the drain tables (modules/drains/tables/), the ingest queue and the platform log copy.
 * The route families get `kernel`, and the drains and logs families their tables besides.
 */
function composeStore(sql: Sql, secretBox: SecretBox, auditWriter: AuditWriter) {
  const kernel = composeKernelStore(sql, secretBox, auditWriter);
  const drainTables = createDrainTables(sql);
  return {
    ...kernel,
    ...drainTables,
    queue: createQueueRepo(sql),
    logs: createLogsRepo(sql),
    /** A unit of work whose `tx` holds the drain tables too (modules/drains/tables/index.ts). */
    unitOfWork: createDrainUnitOfWork(sql, auditWriter),
    /** What the route families are handed: no drain table, no log copy. */
    kernel,
    /** The drain tables, for the drains family. */
    drainTables,
    close: () => sql.close(),
  };
}

export type Store = ReturnType<typeof composeStore>;

/**
 * Without ENCRYPTION_KEY the sealing key is generated once and kept in the
 * store itself. That protects nothing against someone holding the database,
 * so production deployments set ENCRYPTION_KEY (docs/operations.md, Configuration in production).
 */
async function storedKey(sql: Sql): Promise<Buffer> {
  const fresh = randomBytes(32).toString('base64');
  await sql.query("insert into settings (name, value) values ('secret_box_key', $1) on conflict (name) do nothing", [fresh]);
  const rows = await sql.query<{ value: string }>("select value from settings where name = 'secret_box_key'");
  return Buffer.from(rows[0]!.value, 'base64');
}
