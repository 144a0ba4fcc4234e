/**
 * The planner's statistics kept by the store where no autovacuum keeps them (store/statistics.ts):
 * a table grown since it was made is analysed in the next round, and only then; the channel
 * deliveries list of an agent with thousands of deliveries then walks its index for the newest
 * rows instead of reading and sorting all of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/store.js';
import { familyMigrations } from '../../../src/modules/index.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { analyzeStaleTables, keepStatistics, LARGE_TABLE_PAGES, serverAnalyses } from '../../../src/store/statistics.js';
import { createChannelsRepo } from '../../../src/modules/channels/repository.js';
import type { Delivery } from '../../../src/modules/channels/model.js';

const DELIVERIES = 3000;

function delivery(i: number): Delivery {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000);
  return {
    id: `dlv_stats_${String(i).padStart(5, '0')}`, orgId: 'org_stats', agentId: 'agt_stats', channel: 'sms', channelIdentifier: null,
    from: '+15550000000', to: { phoneNumber: '+15550001234' }, userId: null, address: '+15550001234', provider: 'sandbox', origin: 'channels_send',
    status: 'accepted', failure: null, history: [{ status: 'accepted', at: at.toISOString(), source: 'send' }], messageId: `msg_${i}`,
    template: null, idempotencyKey: null, cost: null, createdAt: at, updatedAt: at,
  };
}

/** The plan of the deliveries list's statement for the agent (EXPLAIN, text). */
async function listPlan(store: Store): Promise<string> {
  const rows = await store.sql.query<{ 'QUERY PLAN': string }>(
    `explain select * from channel_deliveries
     where agent_id = 'agt_stats' and (null::text is null or user_id = null) and (null::text is null or status = null)
       and (null::text is null or channel = null) and (null::timestamptz is null or created_at >= null)
     order by created_at desc, id desc limit 50`,
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

const analysedAt = async (store: Store, table: string): Promise<number> =>
  (await store.sql.query<{ reltuples: number }>('select reltuples::float8 as reltuples from pg_class where relname = $1', [table]))[0]!.reltuples;

/** Both stores with the families' tables (the channels family's deliveries among them). */
const KINDS = [
  { name: 'pglite' as const, open: async () => {
    const store = await openStore({ dataDir: 'memory://', migrations: familyMigrations });
    return { store, dispose: () => store.close() };
  } },
  { name: 'postgres' as const, open: async () => {
    const db = await createTestDatabase();
    const store = await openStore({ databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations });
    return { store, dispose: async () => {
      await store.close();
      await db.drop();
    } };
  } },
];

describe.each(KINDS)('planner statistics on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  it('analyses a table grown since its creation, once, and the deliveries list then reads along its index', async () => {
    // The empty tables of a new store need nothing; a round may still find some the migrations filled.
    await analyzeStaleTables(store.sql);
    expect(await analyzeStaleTables(store.sql)).toEqual([]);

    const repo = createChannelsRepo(store.sql);
    for (let i = 0; i < DELIVERIES; i += 500) await repo.insertDeliveries(Array.from({ length: 500 }, (_, k) => delivery(i + k)));
    // Planned as an empty table: every delivery of the agent read, then sorted.
    expect(await listPlan(store)).toMatch(/Sort/);

    expect(await analyzeStaleTables(store.sql)).toContain('channel_deliveries');
    expect(await analysedAt(store, 'channel_deliveries')).toBe(DELIVERIES);
    const plan = await listPlan(store);
    expect(plan).toMatch(/Index Scan using channel_deliveries_agent/);
    expect(plan).not.toMatch(/Sort/);
    // Nothing moved since: the next round analyses nothing.
    expect(await analyzeStaleTables(store.sql)).toEqual([]);

    // A growth of less than a tenth is left alone; the answer is the same either way.
    await repo.insertDeliveries([delivery(DELIVERIES)]);
    expect(await analyzeStaleTables(store.sql)).not.toContain('channel_deliveries');
    const newest = await repo.listDeliveries('agt_stats', { limit: 50 });
    expect(newest.map((d) => d.id)).toEqual(Array.from({ length: 50 }, (_, k) => delivery(DELIVERIES - k).id));
  });

  it('runs its rounds on a timer only where the server does not analyse', async () => {
    const analyses = await serverAnalyses(store.sql);
    if (kind.name === 'pglite') expect(analyses).toBe(false);
    else expect(analyses).toBe((await store.sql.query<{ v: string }>("select current_setting('autovacuum') as v"))[0]!.v === 'on');

    const repo = createChannelsRepo(store.sql);
    await repo.insertDeliveries(Array.from({ length: 2000 }, (_, k) => delivery(10_000 + k)));
    const errors: Error[] = [];
    const keeper = await keepStatistics(store.sql, { intervalMs: 20, onError: (e) => errors.push(e) });
    const before = await analysedAt(store, 'channel_deliveries');
    for (let i = 0; i < 100 && !analyses && (await analysedAt(store, 'channel_deliveries')) === before; i++) await new Promise((r) => setTimeout(r, 20));
    await keeper.stop();
    expect(errors).toEqual([]);
    const after = await analysedAt(store, 'channel_deliveries');
    if (analyses) expect(after).toBe(before);
    else expect(after).toBe(DELIVERIES + 1 + 2000);
  });

  it('leaves a table analysed within `recentMs` (by any process) to a later round', async () => {
    // Each process keeps rounds of its own: a table outgrowing its statistics every interval (a day
    // partition a worker fills) was analysed by every process in turn.
    await store.sql.query('create table stats_recent (n int)');
    await store.sql.query('insert into stats_recent select generate_series(1, 5000)');
    expect(await analyzeStaleTables(store.sql, { recentMs: 60_000 })).toContain('stats_recent');
    // Grown by more than a tenth since: stale, but analysed a moment ago.
    await store.sql.query('insert into stats_recent select generate_series(1, 5000)');
    expect(await analyzeStaleTables(store.sql, { recentMs: 60_000 })).not.toContain('stats_recent');
    expect(await analysedAt(store, 'stats_recent')).toBe(5000);
    // Once that analysis is older than `recentMs`, the next round takes the table.
    expect(await analyzeStaleTables(store.sql, { recentMs: 0 })).toContain('stats_recent');
    expect(await analysedAt(store, 'stats_recent')).toBe(10_000);
  });

  it('analyses a large table from a smaller sample, and a small one from the full sample', async () => {
    // 30,000 rows sampled at the default target: 300 to 700 ms of the embedded store's thread for
    // 100,000 rows, about 0.9 CPU-s of a Postgres server; a large table is analysed at a target of 10.
    await store.sql.query('create table stats_large (n int, pad text)');
    await store.sql.query("insert into stats_large select i, repeat('p', 100) from generate_series(1, 80000) i");
    await store.sql.query('create table stats_small (n int)');
    await store.sql.query('insert into stats_small select generate_series(1, 5000)');
    const pages = (await store.sql.query<{ pages: number }>("select (pg_relation_size('stats_large') / 8192)::int as pages"))[0]!.pages;
    expect(pages).toBeGreaterThan(LARGE_TABLE_PAGES);
    const analysed = await analyzeStaleTables(store.sql);
    expect(analysed).toEqual(expect.arrayContaining(['stats_large', 'stats_small']));
    // A histogram has at most target + 1 bounds.
    const bounds = async (table: string) =>
      (await store.sql.query<{ bounds: number }>(
        "select array_length(histogram_bounds::text::int[], 1) as bounds from pg_stats where tablename = $1 and attname = 'n'", [table],
      ))[0]!.bounds;
    expect(await bounds('stats_large')).toBeLessThanOrEqual(11);
    expect(await bounds('stats_small')).toBe(101);
    // The setting was the analysis's only.
    expect((await store.sql.query<{ t: string }>("select current_setting('default_statistics_target') as t"))[0]!.t).toBe('100');
  });
});
