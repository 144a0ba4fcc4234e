/**
 * The store: one SQL connection (PGlite or Postgres) and the repositories
 * written against it. Opening it applies migrations.
 */
import { randomBytes } from 'node:crypto';
import { openSql, type Sql } from './sql.js';
import { withStoreErrorsMarked } from './unavailable.js';
import { migrate, type Migration } from './migrate.js';
import { createDrainsRepo } from './drains-repo.js';
import { createDeliveriesRepo } from './deliveries-repo.js';
import { createHealthRepo } from './health-repo.js';
import { createAuthRepo } from './auth-repo.js';
import { createQueueRepo } from './queue-repo.js';
import { createDeadLettersRepo } from './dead-letters-repo.js';
import { createVerificationsRepo } from './verifications-repo.js';
import { createAuditRepo } from './audit-repo.js';
import { createRateLimitsRepo } from './rate-limits-repo.js';
import { createBacklogRepo } from './backlog-repo.js';
import { createLogsRepo } from './logs-repo.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { createProbesRepo } from './probes-repo.js';
import { createTenancyRepo } from './tenancy-repo.js';
import { createReplaysRepo } from './replays-repo.js';
import { createUnitOfWork, insertAudit, type AuditWriter } from './unit-of-work.js';
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

function composeStore(sql: Sql, secretBox: SecretBox, auditWriter: AuditWriter) {
  return {
    sql,
    secretBox,
    drains: createDrainsRepo(sql),
    deliveries: createDeliveriesRepo(sql),
    health: createHealthRepo(sql),
    auth: createAuthRepo(sql),
    queue: createQueueRepo(sql),
    deadLetters: createDeadLettersRepo(sql),
    verifications: createVerificationsRepo(sql),
    audit: createAuditRepo(sql),
    rateLimits: createRateLimitsRepo(sql),
    backlog: createBacklogRepo(sql),
    logs: createLogsRepo(sql),
    idempotency: createIdempotencyRepo(sql),
    probes: createProbesRepo(sql),
    /** Drain replays: the API's requests and cancels, the workers' leases and progress. */
    replays: createReplaysRepo(sql),
    /** Organizations and agents the API creates and removes (the seed upserts them from a file). */
    tenancy: createTenancyRepo(sql),
    /** Runs `fn` in one transaction with repositories bound to it and `tx.audit` (unit-of-work.ts). */
    unitOfWork: createUnitOfWork(sql, auditWriter),
    async ping(): Promise<boolean> {
      try {
        await sql.query('select 1');
        return true;
      } catch {
        return false;
      }
    },
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
