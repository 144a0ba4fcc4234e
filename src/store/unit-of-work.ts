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
 *
 * The audit entries are written once `fn` has resolved, as the unit's last statement, which on
 * Postgres carries the COMMIT (sql.ts queryThenCommit): the entry and the commit cost one round
 * trip rather than two, and the row locks a unit took are held one round trip less. An entry the
 * table refuses leaves the COMMIT unrun and fails the unit, rolled back as before. `tx.audit`
 * resolves to the entry as it will be written; the unit's own reads of the audit log
 * (`tx.auditLog`) write the entries waiting first.
 */
import { newId } from '../model/ids.js';
import type { Sql } from './sql.js';
import { createAuditRepo, type AuditEntry } from './audit-repo.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { noteTenancyChange, noteTopicChange, READS_CHANNEL } from './change-epochs.js';
import { createTenancyRepo } from './tenancy-repo.js';

/** Writes one audit entry on the transaction's connection. A store option (StoreOptions.auditWriter) only to test failures. */
export type AuditWriter = (tx: Sql, entry: AuditEntry) => Promise<void>;

export const insertAudit: AuditWriter = (tx, entry) => createAuditRepo(tx).insert(entry);

/**
 * Writes a unit's entries once `fn` resolved; the last statement commits. The store's own writer
 * inserts every entry in one statement carrying the COMMIT; another writer (the tests' failing one)
 * writes each as it does, then the transaction commits as usual.
 */
async function writeAuditThenCommit(tx: Sql, auditWriter: AuditWriter, entries: readonly AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  if (auditWriter === insertAudit) return createAuditRepo(tx).insertThenCommit(entries);
  for (const entry of entries) await auditWriter(tx, entry);
}

/** An audit entry as a unit of work takes it: `id` and `at` are filled in when left out. */
export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'> & Partial<Pick<AuditEntry, 'id' | 'at'>>;

/**
 * The unit handed to `fn`, and `finish`, which writes the entries still waiting as the
 * transaction's last statement (createUnitOfWork, once `fn` resolved).
 */
function bindUnitOfWork(
  tx: Sql,
  auditWriter: AuditWriter,
  onTenancyChange: () => void,
  onCommit: (fn: () => void) => void,
  onChanged: (topic: string) => void,
) {
  const waiting: AuditEntry[] = [];
  /** Writes the entries waiting, for a read of the audit log inside the unit. */
  const writeWaiting = async (): Promise<void> => {
    for (const entry of waiting.splice(0)) await auditWriter(tx, entry);
  };
  const auditLog = createAuditRepo(tx);
  const unit = {
    /** The transaction itself: families build their repositories on it. */
    sql: tx,
    idempotency: createIdempotencyRepo(tx),
    /** Organizations and agents, created or removed in this transaction. */
    tenancy: createTenancyRepo(tx, onTenancyChange),
    /** The audit log's reads, inside the transaction (writes go through `audit`); the unit's own entries included. */
    auditLog: {
      page: async (...args: Parameters<typeof auditLog.page>) => (await writeWaiting(), auditLog.page(...args)),
      eraseDetails: async (...args: Parameters<typeof auditLog.eraseDetails>) => (await writeWaiting(), auditLog.eraseDetails(...args)),
    },
    /**
     * Records `entry` in this transaction, written with its commit (above); a failure to write it
     * rolls the whole unit back and fails it.
     */
    async audit(entry: NewAuditEntry): Promise<AuditEntry> {
      const full: AuditEntry = { ...entry, id: entry.id ?? newId(), at: entry.at ?? new Date() };
      waiting.push(full);
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
  return { unit, finish: (): Promise<void> => writeAuditThenCommit(tx, auditWriter, waiting.splice(0)) };
}

export type UnitOfWork = ReturnType<typeof bindUnitOfWork>['unit'];

/**
 * How long a change's notification waits for others to go with it. Under a stream of writes (a
 * thousand sends a second) a notification each was a statement each on the pool's connections
 * beside the writes: about a third of the sends a second. Gathered, the topics changed within the
 * window go in one statement; the other processes hear of a change this much later at most.
 */
export const ANNOUNCE_GATHER_MS = 5;

/** The topics waiting to be announced, by store. */
const gathering = new WeakMap<Sql, Set<string>>();

/**
 * Tells the other API processes (Postgres) that `topic` changed, once its unit of work has
 * committed: sent after the commit rather than in the transaction, so that no row lock of the unit
 * is held for one more round trip, not awaited, and gathered with the other changes of the next
 * ANNOUNCE_GATHER_MS (every change gathered has committed before the statement is sent). A
 * notification lost with its process (or its connection) leaves the other processes' entries to
 * their age bound (api/kernel/read-cache.ts).
 */
function announceChange(sql: Sql, topic: string): void {
  if (sql.kind !== 'postgres') return;
  const waiting = gathering.get(sql);
  if (waiting) {
    waiting.add(topic);
    return;
  }
  const topics = new Set([topic]);
  gathering.set(sql, topics);
  setTimeout(() => {
    gathering.delete(sql);
    sql.query(`select pg_notify('${READS_CHANNEL}', t) from unnest($1::text[]) as t`, [[...topics]]).catch(() => {});
  }, ANNOUNCE_GATHER_MS).unref();
}

/**
 * `store.changed`: a write of what the read caches of `topic` hold, made outside a unit of work (an
 * autocommitted statement), has committed: this process's entries of `topic` are no longer
 * trusted and the other processes are notified, as after a unit of work that called `tx.changed`.
 * Call it once the statement has returned, never before (an entry read in between would be trusted).
 */
export function createChangeNotice(sql: Sql) {
  return (topic: string): void => {
    noteTopicChange(topic);
    announceChange(sql, topic);
  };
}

/**
 * `store.unitOfWork`: runs `fn` in one transaction; commits when it resolves, rolls back when it
 * throws. What the transaction's repositories registered with `afterCommit` runs once it has
 * committed. The tenancy counter (change-epochs.ts) moves again once a unit that wrote
 * organizations or agents has ended: a credential lookup made between its statement and its commit
 * read the old rows.
 */
export function createUnitOfWork(sql: Sql, auditWriter: AuditWriter = insertAudit) {
  const noteChanged = createChangeNotice(sql);
  return async <T>(fn: (tx: UnitOfWork) => Promise<T>): Promise<T> => {
    let tenancyWritten = false;
    const noteTenancy = (): void => {
      tenancyWritten = true;
      noteTenancyChange();
    };
    const committed = new Set<() => void>();
    const topics = new Set<string>();
    try {
      const result = await sql.transaction(async (tx) => {
        const { unit, finish } = bindUnitOfWork(tx, auditWriter, noteTenancy, (hook) => committed.add(hook), (topic) => topics.add(topic));
        const answer = await fn(unit);
        await finish();
        return answer;
      });
      for (const hook of committed) hook();
      for (const topic of topics) noteChanged(topic);
      return result;
    } finally {
      if (tenancyWritten) noteTenancyChange();
    }
  };
}
