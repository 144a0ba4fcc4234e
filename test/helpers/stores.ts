/** Runs a store test against both connections: PGlite in memory and a fresh Postgres database. */
import { openStore, type Store } from '../../src/store/store.js';
import type { Migration } from '../../src/store/migrate.js';
import { familyMigrations } from '../../src/modules/index.js';
import { createTestDatabase } from './postgres.js';

export interface StoreKind {
  name: 'pglite' | 'postgres';
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

export const STORE_KINDS: StoreKind[] = [
  {
    name: 'pglite',
    async open() {
      const store = await openStore({ dataDir: 'memory://' });
      return { store, dispose: () => store.close() };
    },
  },
  {
    name: 'postgres',
    async open() {
      const db = await createTestDatabase();
      const store = await openStore({ databaseUrl: db.url, maxConnections: 4 });
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

/**
 * Both connections with every family migration but `id` applied: a store as the release before
 * that migration left it, for tests of an upgrade (migrate it afterwards to upgrade it).
 */
export function storeKindsWithout(id: string): StoreKind[] {
  if (!familyMigrations.some((m) => m.id === id)) throw new Error(`no migration ${id}`);
  return storeKindsWith(familyMigrations.filter((m) => m.id !== id));
}

/** Both connections with `migrations` applied (instead of the core's alone). */
export function storeKindsWith(migrations: readonly Migration[]): StoreKind[] {
  return [
    {
      name: 'pglite',
      async open() {
        const store = await openStore({ dataDir: 'memory://', migrations });
        return { store, dispose: () => store.close() };
      },
    },
    {
      name: 'postgres',
      async open() {
        const db = await createTestDatabase();
        const store = await openStore({ databaseUrl: db.url, maxConnections: 4, migrations });
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

/** Both connections with every family's migrations: the store a family's repository runs on. */
export const FAMILY_STORE_KINDS: StoreKind[] = storeKindsWith(familyMigrations);
