/**
 * A unit of work: `fn` runs in one transaction with the repositories bound to
 * it, and `tx.audit(entry)` writes an audit entry in that same transaction. A
 * mutation and the entry that records it commit together or not at all.
 *
 * Inside `fn`, use only `tx`: the store's own repositories run outside the
 * transaction (on PGlite, whose one connection the transaction holds, they
 * would wait for it to end). Reads for the answer come after it resolves.
 */
import { ulid } from 'ulid';
import type { Sql } from './sql.js';
import { createDrainsRepo } from './drains-repo.js';
import { createAuditRepo, type AuditEntry } from './audit-repo.js';
import { createDeliveriesRepo } from './deliveries-repo.js';
import { createVerificationsRepo } from './verifications-repo.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { createProbesRepo } from './probes-repo.js';
import { noteDrainConfigChange, noteTenancyChange } from './change-epochs.js';
import { createTenancyRepo } from './tenancy-repo.js';
import { createReplaysRepo } from './replays-repo.js';

/** Writes one audit entry on the transaction's connection. A store option (StoreOptions.auditWriter) only to test failures. */
export type AuditWriter = (tx: Sql, entry: AuditEntry) => Promise<void>;

export const insertAudit: AuditWriter = (tx, entry) => createAuditRepo(tx).insert(entry);

/** An audit entry as a unit of work takes it: `id` and `at` are filled in when left out. */
export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'> & Partial<Pick<AuditEntry, 'id' | 'at'>>;

export function bindUnitOfWork(tx: Sql, auditWriter: AuditWriter = insertAudit, onTenancyChange: () => void = noteTenancyChange) {
  return {
    /** The transaction itself, for statements no repository has. */
    sql: tx,
    drains: createDrainsRepo(tx),
    deliveries: createDeliveriesRepo(tx),
    verifications: createVerificationsRepo(tx),
    idempotency: createIdempotencyRepo(tx),
    probes: createProbesRepo(tx),
    replays: createReplaysRepo(tx),
    /** Organizations and agents, created or removed in this transaction. */
    tenancy: createTenancyRepo(tx, onTenancyChange),
    /** The audit log's reads, inside the transaction (writes go through `audit`). */
    auditLog: createAuditRepo(tx),
    /** Writes `entry` in this transaction; a failure rolls the whole unit back when it propagates. */
    async audit(entry: NewAuditEntry): Promise<AuditEntry> {
      const full: AuditEntry = { ...entry, id: entry.id ?? ulid(), at: entry.at ?? new Date() };
      await auditWriter(tx, full);
      return full;
    },
  };
}

export type UnitOfWork = ReturnType<typeof bindUnitOfWork>;

/**
 * `store.unitOfWork`: runs `fn` in one transaction; commits when it resolves, rolls back when it
 * throws. Units of work write drains: the drain configuration's change counter moves once the
 * transaction has ended (change-epochs.ts), so a cache filled from a read made before the commit
 * is not trusted after it. Likewise the tenancy counter, when the unit wrote organizations or agents.
 */
export function createUnitOfWork(sql: Sql, auditWriter: AuditWriter = insertAudit) {
  return <T>(fn: (tx: UnitOfWork) => Promise<T>): Promise<T> => {
    // A unit that wrote organizations or agents moves the tenancy counter again once it has ended:
    // a credential lookup made between its statement and its commit read the old rows.
    let tenancyWritten = false;
    const noteTenancy = (): void => {
      tenancyWritten = true;
      noteTenancyChange();
    };
    return sql.transaction((tx) => fn(bindUnitOfWork(tx, auditWriter, noteTenancy))).finally(() => {
      noteDrainConfigChange();
      if (tenancyWritten) noteTenancyChange();
    });
  };
}
