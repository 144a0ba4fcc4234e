/** Runs a store test against both connections: PGlite in memory and a fresh Postgres database. */
import { openStore, type Store } from '../../src/store/store.js';
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
