/**
 * The drain tables (drains, deliveries, verifications, probes, the hourly counters, dead letters,
 * the backlog and daily usage): written by the delivery engine and served by the drains route
 * family, whose they are. The engine runs without the REST layer (`logdrain worker`) and imports
 * no other part of a family; it may import these because they import only the store kernel, the
 * model and each other (.dependency-cruiser.cjs). No other family may import them.
 */
import type { Sql } from '../../../store/sql.js';
import { createUnitOfWork, insertAudit, type AuditWriter, type UnitOfWork } from '../../../store/unit-of-work.js';
import { noteDrainConfigChange } from '../../../store/change-epochs.js';
import { createDrainsRepo } from './drains.js';
import { createDeliveriesRepo } from './deliveries.js';
import { createVerificationsRepo } from './verifications.js';
import { createProbesRepo } from './probes.js';
import { createHealthRepo } from './health.js';
import { createDeadLettersRepo } from './dead-letters.js';
import { createBacklogRepo } from './backlog.js';
import { createCircuitsRepo } from './circuits.js';
import { createReplaysRepo } from './replays.js';

/** The drain tables' repositories on one connection (the store's, or a transaction's). */
export function createDrainTables(sql: Sql, onDrainWrite?: () => void) {
  return {
    drains: createDrainsRepo(sql, onDrainWrite),
    deliveries: createDeliveriesRepo(sql),
    verifications: createVerificationsRepo(sql),
    probes: createProbesRepo(sql),
    health: createHealthRepo(sql),
    deadLetters: createDeadLettersRepo(sql),
    backlog: createBacklogRepo(sql),
    /** Each drain's circuit (the drain-wide brake) and its openings by hour. */
    circuits: createCircuitsRepo(sql),
    /** Drain replays: the API's requests and cancels, the workers' leases and progress. */
    replays: createReplaysRepo(sql),
  };
}

export type DrainTables = ReturnType<typeof createDrainTables>;

/** The drain tables a transaction writes: the rows of drains, their verifications, probes, deliveries and replays. */
export type DrainTablesTx = Pick<DrainTables, 'drains' | 'deliveries' | 'verifications' | 'probes' | 'replays'>;

/** A unit of work with the drain tables bound to its transaction. */
export type DrainUnitOfWork = UnitOfWork & DrainTablesTx;

/**
 * Binds the drain tables to `tx`'s transaction. A write to the drains table moves the drain
 * configuration counter (change-epochs.ts) after its statement and again once the transaction
 * commits: a cache filled from a read made between them read the old rows. A unit of work that
 * writes no drain moves nothing.
 */
export function bindDrainTables<T extends UnitOfWork>(tx: T): T & DrainTablesTx {
  const tables = createDrainTables(tx.sql, () => tx.afterCommit(noteDrainConfigChange));
  return Object.assign(tx, {
    drains: tables.drains,
    deliveries: tables.deliveries,
    verifications: tables.verifications,
    probes: tables.probes,
    replays: tables.replays,
  });
}

/** A unit of work (unit-of-work.ts) whose `tx` holds the drain tables too: the engine's and the drain tests'. */
export function createDrainUnitOfWork(sql: Sql, auditWriter: AuditWriter = insertAudit) {
  const unitOfWork = createUnitOfWork(sql, auditWriter);
  return <T>(fn: (tx: DrainUnitOfWork) => Promise<T>): Promise<T> => unitOfWork((tx) => fn(bindDrainTables(tx)));
}
