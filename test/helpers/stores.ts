/** Runs a store test against both connections: PGlite in memory and a fresh Postgres database. */
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../../src/store/store.js';
import type { Migration } from '../../src/store/migrate.js';
import { familyMigrations } from '../../src/modules/index.js';
import { createTestDatabase } from './postgres.js';

export interface StoreKind {
  name: 'pglite' | 'postgres';
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

export const STORE_KINDS: StoreKind[] = storeKindsWith();

/**
 * Both connections with every family migration but `id` applied: a store as the release before
 * that migration left it, for tests of an upgrade (migrate it afterwards to upgrade it).
 */
export function storeKindsWithout(id: string): StoreKind[] {
  if (!familyMigrations.some((m) => m.id === id)) throw new Error(`no migration ${id}`);
  return storeKindsWith(familyMigrations.filter((m) => m.id !== id));
}

/** Both connections with `migrations` applied where given (instead of the core's alone). */
export function storeKindsWith(migrations?: readonly Migration[]): StoreKind[] {
  const applied = migrations ? { migrations } : {};
  return [
    {
      name: 'pglite',
      async open() {
        const store = await openStore({ dataDir: 'memory://', ...applied });
        return { store, dispose: () => store.close() };
      },
    },
    {
      name: 'postgres',
      async open() {
        const db = await createTestDatabase();
        const store = await openStore({ databaseUrl: db.url, maxConnections: 4, ...applied });
        return {
          store,
          async dispose() {
            await store.close();
            await db.drop();
          },
        };
      },
    },
  ];
}

/**
 * The store of one kind for a describe block: opened (and filled by `fill`) before its tests,
 * disposed after them; the answer reads it inside a test.
 */
export function storeForSuite(kind: StoreKind, fill: (store: Store) => Promise<void>): () => Store {
  let store: Store | undefined;
  let dispose: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
    await fill(store);
  });
  afterAll(async () => {
    await dispose?.();
  });
  return () => store!;
}

/** Both connections with every family's migrations: the store a family's repository runs on. */
export const FAMILY_STORE_KINDS: StoreKind[] = storeKindsWith(familyMigrations);
