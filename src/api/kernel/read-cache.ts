/**
 * The kernel's read caches: what a family's read route answers, kept in the API process so that
 * a repeated read runs no statement (on the embedded store each statement is planned again in the
 * API's own thread, several milliseconds; on Postgres a round trip). A family names a topic for
 * what a cache holds, and every unit of work that writes any of it calls `tx.changed(topic)`
 * (store/unit-of-work.ts). An entry is then
 *
 * - never older than a write made through this process: the topic's counter
 *   (store/change-epochs.ts), taken before the entry's read, moves once such a write has committed;
 * - older than a write made by another process (Postgres) only until the notification that process
 *   sends after its commit is heard (READS_CHANNEL, LISTEN), and at most `maxAgeMs` (1 s) in any
 *   case (a notification lost with its process or connection).
 *   Without a listening connection (lost, until it is back) nothing is cached on Postgres. The
 *   embedded store is one process's alone.
 *
 * Entries are kept and trusted as cache-entries.ts says.
 */
import type { Sql } from '../../store/sql.js';
import { READS_CHANNEL, topicEpoch } from '../../store/change-epochs.js';
import { cacheEntries, type CacheEntries } from './cache-entries.js';

/**
 * A route's answer as `reply.serialize` made it, in bytes: what a cache of serialized answers keeps
 * and the route sends unchanged (a large answer's serialization costs more than its read).
 */
export const answerBytes = (serialized: string | Buffer | ArrayBuffer): Buffer =>
  typeof serialized === 'string' ? Buffer.from(serialized) : Buffer.isBuffer(serialized) ? serialized : Buffer.from(serialized);

/** An entry is read again this long after it was read, whatever was heard. */
export const READ_CACHE_MAX_AGE_MS = 1000;

export interface ReadCache<T> {
  /** The value of `key`: the cached one while it is trusted, else what `read` resolves to. */
  get(key: string, read: () => Promise<T>): Promise<T>;
}

export interface ReadCaches {
  /** A cache of what the units of work that call `tx.changed(topic)` write. */
  cache<T>(topic: string, opts?: { maxAgeMs?: number }): ReadCache<T>;
  stop(): Promise<void>;
}

/**
 * `listen: false` (DRAIN_CONFIG_LISTEN, behind a pooler that cannot LISTEN: one in transaction mode
 * takes the LISTEN and never delivers a notification): nothing is cached on Postgres, as with the
 * connection lost.
 */
export async function createReadCaches(sql: Sql, opts: { listen: boolean } = { listen: true }): Promise<ReadCaches> {
  /** Notifications heard (and reconnections, after which what was sent meanwhile is unknown). */
  let remote = 0;
  let listening = sql.kind === 'pglite';
  let unwatch: (() => Promise<void>) | undefined;
  if (sql.kind === 'postgres' && opts.listen) {
    try {
      unwatch = await sql.listen(
        READS_CHANNEL,
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
      // No listening connection: every read goes to the store.
    }
  }

  const caches = new Set<CacheEntries<unknown>>();

  return {
    cache<T>(topic: string, opts: { maxAgeMs?: number } = {}): ReadCache<T> {
      const entries = cacheEntries<T>({ maxAgeMs: opts.maxAgeMs ?? READ_CACHE_MAX_AGE_MS, local: () => topicEpoch(topic), remote: () => remote });
      caches.add(entries as CacheEntries<unknown>);
      return { get: (key, read) => (listening ? entries.get(key, read) : read()) };
    },
    async stop() {
      listening = false;
      for (const c of caches) c.clear();
      await unwatch?.();
    },
  };
}
