/**
 * A unit of work: `fn` runs in one transaction with the kernel's repositories bound to it, and
 * `tx.audit(entry)` writes an audit entry in that same transaction. A mutation and the entry that
 * records it commit together or not at all.
 *
 * The kernel binds only what every family shares (the audit log, idempotency keys, tenancy). A
 * family builds its own repositories from the transaction (`tx.sql`); one that caches what it
 * writes registers `tx.afterCommit(fn)` when it writes, so a commit moves only the caches of what
 * it wrote (the drain tables: modules/drains/tables/index.ts).
 *
 * Inside `fn`, use only `tx`: the store's own repositories run outside the transaction (on PGlite,
 * whose one connection the transaction holds, they would wait for it to end). Reads for the answer
 * come after it resolves.
 */
import { ulid } from 'ulid';
import type { Sql } from './sql.js';
import { createAuditRepo, type AuditEntry } from './audit-repo.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { noteTenancyChange, noteTopicChange, READS_CHANNEL } from './change-epochs.js';
import { createTenancyRepo } from './tenancy-repo.js';

/** Writes one audit entry on the transaction's connection. A store option (StoreOptions.auditWriter) only to test failures. */
export type AuditWriter = (tx: Sql, entry: AuditEntry) => Promise<void>;

export const insertAudit: AuditWriter = (tx, entry) => createAuditRepo(tx).insert(entry);

/** An audit entry as a unit of work takes it: `id` and `at` are filled in when left out. */
export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'> & Partial<Pick<AuditEntry, 'id' | 'at'>>;

export function bindUnitOfWork(
  tx: Sql,
  auditWriter: AuditWriter = insertAudit,
  onTenancyChange: () => void = noteTenancyChange,
  onCommit: (fn: () => void) => void = () => {},
  onChanged: (topic: string) => void = (topic) => onCommit(() => noteTopicChange(topic)),
) {
  return {
    /** The transaction itself: families build their repositories on it. */
    sql: tx,
    idempotency: createIdempotencyRepo(tx),
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
    /** Runs `fn` once the transaction has committed (never when it rolls back); each `fn` once. */
    afterCommit(fn: () => void): void {
      onCommit(fn);
    },
    /**
     * This unit writes what the read caches of `topic` hold (api/kernel/read-cache.ts): once it has
     * committed, this process's entries of `topic` are no longer trusted and the other processes are
     * notified (never when it rolls back).
     */
    changed(topic: string): void {
      onChanged(topic);
    },
  };
}

export type UnitOfWork = ReturnType<typeof bindUnitOfWork>;

/**
 * Tells the other API processes (Postgres) that `topic` changed, once its unit of work has
 * committed: sent after the commit rather than in the transaction, so that no row lock of the unit
 * is held for one more round trip, and not awaited. A notification lost with its process (or its
 * connection) leaves the other processes' entries to their age bound (api/kernel/read-cache.ts).
 */
function announceChange(sql: Sql, topic: string): void {
  if (sql.kind !== 'postgres') return;
  sql.query(`select pg_notify('${READS_CHANNEL}', $1)`, [topic]).catch(() => {});
}

/**
 * `store.unitOfWork`: runs `fn` in one transaction; commits when it resolves, rolls back when it
 * throws. What the transaction's repositories registered with `afterCommit` runs once it has
 * committed. The tenancy counter (change-epochs.ts) moves again once a unit that wrote
 * organizations or agents has ended: a credential lookup made between its statement and its commit
 * read the old rows.
 */
export function createUnitOfWork(sql: Sql, auditWriter: AuditWriter = insertAudit) {
  return async <T>(fn: (tx: UnitOfWork) => Promise<T>): Promise<T> => {
    let tenancyWritten = false;
    const noteTenancy = (): void => {
      tenancyWritten = true;
      noteTenancyChange();
    };
    const committed = new Set<() => void>();
    const topics = new Set<string>();
    try {
      const result = await sql.transaction((tx) =>
        fn(bindUnitOfWork(tx, auditWriter, noteTenancy, (hook) => committed.add(hook), (topic) => topics.add(topic))),
      );
      for (const hook of committed) hook();
      for (const topic of topics) {
        noteTopicChange(topic);
        announceChange(sql, topic);
      }
      return result;
    } finally {
      if (tenancyWritten) noteTenancyChange();
    }
  };
}
