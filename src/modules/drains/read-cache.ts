/**
 * The drain routes' read cache: drain rows (one drain, an organization's list, a drain's absence)
 * and each drain's live facts (health, backlog, today's usage), kept in the API process so a read
 * of a drain runs no statement in the steady state. What it answers, and how old it may be:
 *
 * - drain rows: never older than a write made through this process (the store's drain
 *   configuration counter, store/change-epochs.ts, moves after each one, after its commit: a
 *   PATCH then a GET through one process reads the PATCH); a write made by another process is
 *   seen on its notification (migration 008, LISTEN), and rows are read again at the latest
 *   CONFIG_MAX_AGE_MS after they were read. Without a listening connection (DRAIN_CONFIG_LISTEN
 *   false, or the connection lost until it is back) rows are not cached at all.
 * - live facts: never older than an accounting write of this process (deliveries, counters,
 *   backlog and usage, store/change-epochs.ts); those of another process (a separate worker) are
 *   shown at most LIVE_MAX_AGE_MS late.
 *
 * Entries are kept and trusted as the kernel's (api/kernel/cache-entries.ts): only while the
 * counters they were read under (taken before their statements) have not moved, so a write racing
 * a read is never hidden.
 */
import type { DrainTables } from './tables/index.js';
import type { Drain } from '../../model/drain.js';
import { drainActivityEpoch, drainConfigEpoch } from '../../store/change-epochs.js';
import { hourOf } from '../../model/time.js';
import { readDrainLive, type DrainLive } from './read-form.js';
import { cacheEntries } from '../../api/kernel/cache-entries.js';

/** Drain rows are read again this long after they were read, notification or not. */
export const CONFIG_MAX_AGE_MS = 1000;
/** A drain's live facts are read again this long after they were read. */
export const LIVE_MAX_AGE_MS = 1000;

export interface DrainReadCache {
  /** The live drain `id` of `orgId`, or undefined. */
  drain(orgId: string, id: string): Promise<Drain | undefined>;
  /** The organization's live drains, in the list's order. */
  drains(orgId: string): Promise<Drain[]>;
  live(drainId: string, nowMs?: number): Promise<DrainLive>;
  stop(): Promise<void>;
}

export async function createDrainReadCache(tables: Pick<DrainTables, 'drains' | 'health' | 'backlog' | 'circuits'>, opts: { listen: boolean }): Promise<DrainReadCache> {
  /** Notifications heard (and reconnections), as a counter: an entry read before one is not trusted after it. */
  let remote = 0;
  let listening = false;
  let unwatch: (() => Promise<void>) | undefined;
  if (opts.listen) {
    try {
      unwatch = await tables.drains.watchConfig(
        () => {
          remote++;
          listening = true;
        },
        () => {
          listening = false;
          remote++;
        },
      );
      listening = true;
    } catch {
      // No listening connection: rows are read every time (live facts are still cached).
    }
  }

  // Live facts also move with a drain's configuration (a deletion empties its backlog). Both
  // counters only grow: their sum is unchanged only while neither moved.
  const liveEpoch = () => drainActivityEpoch() + drainConfigEpoch();
  const rows = cacheEntries<unknown>({ maxAgeMs: CONFIG_MAX_AGE_MS, local: drainConfigEpoch, remote: () => remote });
  const lives = cacheEntries<DrainLive>({ maxAgeMs: LIVE_MAX_AGE_MS, local: liveEpoch, remote: () => remote });

  const row = <T>(key: string, read: () => Promise<T>): Promise<T> => (listening ? (rows.get(key, read) as Promise<T>) : read());

  return {
    drain: (orgId, id) => row(`d\u0000${orgId}\u0000${id}`, () => tables.drains.get(orgId, id)),
    drains: (orgId) => row(`o\u0000${orgId}`, () => tables.drains.listByOrg(orgId)),
    live: (drainId, nowMs = Date.now()) =>
      lives.get(`${drainId}\u0000${hourOf(nowMs)}`, () => readDrainLive(tables, drainId, nowMs)),
    async stop() {
      listening = false;
      rows.clear();
      lives.clear();
      await unwatch?.();
    },
  };
}
