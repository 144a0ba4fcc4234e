/**
 * The store kernel: what every route family shares and nothing a family owns. One SQL connection,
 * the secret box, credentials, the audit log, idempotency keys, rate-limit windows, organizations
 * and agents, units of work and the liveness ping. A family builds its own repositories on `sql`
 * (or a unit of work's `tx.sql`); the drain tables and the platform log copy, which the delivery
 * engine writes, are handed to the drains and logs families by the composition root (store.ts).
 */
import type { Sql } from './sql.js';
import type { SecretBox } from '../security/secret-box.js';
import { createAuthRepo } from './auth-repo.js';
import { createAuditRepo } from './audit-repo.js';
import { createRateLimitsRepo } from './rate-limits-repo.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { createTenancyRepo } from './tenancy-repo.js';
import { createChangeNotice, createUnitOfWork, type AuditWriter } from './unit-of-work.js';

export function composeKernelStore(sql: Sql, secretBox: SecretBox, auditWriter: AuditWriter) {
  return {
    sql,
    secretBox,
    auth: createAuthRepo(sql),
    audit: createAuditRepo(sql),
    rateLimits: createRateLimitsRepo(sql),
    idempotency: createIdempotencyRepo(sql),
    /** Organizations and agents the API creates and removes (the seed upserts them from a file). */
    tenancy: createTenancyRepo(sql),
    /** Runs `fn` in one transaction with the kernel's repositories bound to it and `tx.audit` (unit-of-work.ts). */
    unitOfWork: createUnitOfWork(sql, auditWriter),
    /**
     * A write outside a unit of work (an autocommitted statement) of what the read caches of a
     * topic hold has committed (unit-of-work.ts createChangeNotice): a unit of work says so with
     * `tx.changed` instead.
     */
    changed: createChangeNotice(sql),
    async ping(): Promise<boolean> {
      try {
        await sql.query('select 1');
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** What the route families are handed as their store (src/modules/platform-deps.ts). */
export type KernelStore = ReturnType<typeof composeKernelStore>;
