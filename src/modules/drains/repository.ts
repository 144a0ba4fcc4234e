/**
 * The drains family's repository: the drain tables (tables/, shared with the delivery
 * engine, which imports no other part of the family) as the routes use them. Reads run on the store's
 * connection; a unit of work's writes on its transaction (`tx.sql`), where a written drain moves
 * the drain configuration counter once the transaction commits (tables/index.ts). A name
 * another live drain of the organization holds is answered here as DRAIN_NAME_TAKEN.
 */
import type { Drain } from '../../model/drain.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import { bindDrainTables, type DrainTables, type DrainUnitOfWork } from './tables/index.js';
import type { DrainPatch } from './tables/drains.js';
import { DrainErrors } from './errors.js';

/** The unique index that keeps a live drain's name its organization's own (migration 001). */
const NAME_INDEX = 'drains_org_name';

const isNameTaken = (e: unknown): boolean => {
  const err = e as { code?: string; constraint?: string; message?: string };
  return err.code === '23505' && (err.constraint === NAME_INDEX || String(err.message ?? '').includes(NAME_INDEX));
};

const nameTaken = (name: string) =>
  DrainErrors.DRAIN_NAME_TAKEN(`A drain named ${JSON.stringify(name)} already exists in this organization.`, { field: 'name' });

/** The drain tables' reads the routes make outside a unit of work. */
export type DrainReads = Pick<DrainTables, 'drains' | 'deliveries' | 'verifications' | 'health' | 'backlog' | 'circuits' | 'replays'>;

/**
 * The drain tables bound to `tx`, the drains' insert and update answering a taken name as
 * DRAIN_NAME_TAKEN.
 */
export function bindDrainRepository(tx: UnitOfWork): DrainUnitOfWork {
  const bound = bindDrainTables(tx);
  const { insert, update } = bound.drains;
  bound.drains = {
    ...bound.drains,
    async insert(d: Drain): Promise<void> {
      try {
        await insert(d);
      } catch (e) {
        if (isNameTaken(e)) throw nameTaken(d.name);
        throw e;
      }
    },
    async update(orgId: string, id: string, patch: DrainPatch, bumpVersion: boolean): Promise<Drain | undefined> {
      try {
        return await update(orgId, id, patch, bumpVersion);
      } catch (e) {
        if (isNameTaken(e)) throw nameTaken(patch.name ?? '');
        throw e;
      }
    },
  };
  return bound;
}
