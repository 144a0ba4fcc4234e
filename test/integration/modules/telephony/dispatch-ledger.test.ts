/**
 * The voice dispatch budget (contract telephony T3.4): 100 dispatches of an
 * agent answered in the preceding 60 seconds, a sliding window, not clock
 * minutes; concurrent reservations cannot overshoot it; a call that was not
 * placed gives its place back. On PGlite and on real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../../src/store/store.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { dispatchLedger, DISPATCH_WINDOW_MS } from '../../../../src/modules/telephony/voice/dispatch-ledger.js';

const KINDS = [
  { name: 'pglite', async open() { const store = await openStore({ dataDir: 'memory://', migrations: familyMigrations }); return { store, dispose: () => store.close() }; } },
  {
    name: 'postgres',
    async open() {
      const db: TestDatabase = await createTestDatabase();
      const store = await openStore({ databaseUrl: db.url, maxConnections: 8, migrations: familyMigrations });
      return { store, dispose: async () => { await store.close(); await db.drop(); } };
    },
  },
];

describe.each(KINDS)('dispatch ledger on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  it('refuses the 101st dispatch of the last 60 s until the oldest leaves the window, whatever the clock minute', async () => {
    const ledger = dispatchLedger(store.sql, 100);
    // Starting 30 s into a clock minute: a fixed window would open again 30 s later.
    const t0 = 1_800_000_030_000;
    for (let i = 0; i < 100; i++) {
      const place = await ledger.reserve('agt_a', t0 + i * 100);
      if (!('placeId' in place)) throw new Error(`dispatch ${i + 1} refused`);
      await ledger.answered(place.placeId, t0 + i * 100);
    }
    expect(await ledger.reserve('agt_a', t0 + 10_000)).toEqual({ retryAfterSeconds: 50 });
    // Past the clock minute's end, still inside the sliding window: refused.
    expect(await ledger.reserve('agt_a', t0 + 45_000)).toEqual({ retryAfterSeconds: 15 });
    // The first dispatch has left the window: one place, and only one.
    const freed = await ledger.reserve('agt_a', t0 + DISPATCH_WINDOW_MS + 1);
    expect(freed).toHaveProperty('placeId');
    expect(await ledger.reserve('agt_a', t0 + DISPATCH_WINDOW_MS + 2)).toHaveProperty('retryAfterSeconds');
    // Another agent's budget is its own.
    expect(await ledger.reserve('agt_b', t0 + 10_000)).toHaveProperty('placeId');
  });

  it('lets exactly the budget through when reservations race, and takes back a place whose call failed', async () => {
    const ledger = dispatchLedger(store.sql, 10);
    const now = 1_900_000_000_000;
    const results = await Promise.all(Array.from({ length: 25 }, () => ledger.reserve('agt_race', now)));
    const placed = results.filter((r) => 'placeId' in r);
    expect(placed).toHaveLength(10);
    const first = placed[0] as { placeId: string };
    await ledger.release(first.placeId);
    expect(await ledger.reserve('agt_race', now + 1)).toHaveProperty('placeId');
    expect(await ledger.reserve('agt_race', now + 2)).toHaveProperty('retryAfterSeconds');
  });
});
