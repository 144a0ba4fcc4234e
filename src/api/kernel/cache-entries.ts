/**
 * The entries of one read cache in the API process, and when an entry is trusted: while the two
 * counters it was read under have not moved (`local`: writes committed through this process;
 * `remote`: notifications heard from other processes, and reconnections of the listening
 * connection) and it is younger than `maxAgeMs`. The counters are taken before the read starts,
 * so a write that commits while the read runs distrusts what it returns.
 *
 * Concurrent misses share one read. An entry past half its age is read again in the background and
 * answers until the new one is there (within its age still), so under steady traffic no request
 * waits for a read. A read that fails is not kept. Past ENTRIES_MAX entries the cache starts again.
 */

/** Entries kept at most per cache. */
export const ENTRIES_MAX = 10_000;

export interface EntryTrust {
  maxAgeMs: number;
  /** A counter that moves after each write of what is cached committed through this process. */
  local(): number;
  /** A counter that moves on each notification of another process's write (and reconnection). */
  remote(): number;
}

export interface CacheEntries<T> {
  /** The value of `key`: the entry's while it is trusted, else what `read` resolves to (kept). */
  get(key: string, read: () => Promise<T>): Promise<T>;
  clear(): void;
}

interface Entry<T> {
  atMs: number;
  local: number;
  remote: number;
  value: Promise<T>;
  /** A read replacing this entry is under way. */
  renewing: boolean;
}

export function cacheEntries<T>(trust: EntryTrust): CacheEntries<T> {
  const map = new Map<string, Entry<T>>();
  const fresh = (read: () => Promise<T>, now: number): Entry<T> =>
    ({ atMs: now, local: trust.local(), remote: trust.remote(), value: read(), renewing: false });
  return {
    get(key, read) {
      const now = Date.now();
      const hit = map.get(key);
      if (hit && hit.local === trust.local() && hit.remote === trust.remote() && now - hit.atMs < trust.maxAgeMs) {
        if (now - hit.atMs >= trust.maxAgeMs / 2 && !hit.renewing) {
          hit.renewing = true;
          const next = fresh(read, now);
          next.value.then(
            () => {
              if (map.get(key) === hit) map.set(key, next);
            },
            () => (hit.renewing = false),
          );
        }
        return hit.value;
      }
      if (map.size >= ENTRIES_MAX) map.clear();
      const entry = fresh(read, now);
      map.set(key, entry);
      entry.value.catch(() => {
        if (map.get(key) === entry) map.delete(key);
      });
      return entry.value;
    },
    clear: () => map.clear(),
  };
}
