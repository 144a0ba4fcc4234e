/**
 * Planner statistics where nothing else keeps them. The planner chooses a plan from each table's
 * statistics (its row count and column values), which ANALYZE writes; Postgres's autovacuum runs
 * it once a table has changed by a tenth. The embedded store (PGlite, one backend in the API's own
 * thread) has no autovacuum, nor has a Postgres server run with `autovacuum = off`: there a table
 * that grew after its creation keeps the estimate of an empty one, and a read of "the newest 50 of
 * an agent" planned for a few dozen rows reads every row of the agent and sorts them (the channel
 * deliveries list: 7 to 9 ms a statement for an agent of 13,000 deliveries, against 0.06 ms along
 * its index once analysed).
 *
 * So each round analyses the tables of the store's schema never analysed since they got rows, or
 * whose size in pages moved by more than a tenth (and ten pages) from what their last analysis saw:
 * the growth rule of autovacuum, read from the table's size, since PGlite keeps no change counts. A
 * table whose rows change in place without its size moving is not caught. Where the server's
 * autovacuum is on, rounds do nothing.
 *
 * ANALYZE samples 300 rows per point of `default_statistics_target`: at Postgres's 100, 30,000 rows,
 * which for the platform copy's day partition of 100,000 records is every page of it, and the
 * statistics of fifteen columns computed from them. On the embedded store that is one statement
 * that every other waits behind, 300 to 700 ms; on Postgres it costs the server about 0.9 CPU-s,
 * and a partition filling at a worker's pace outgrows its last analysis by a tenth every round.
 * Tables over LARGE_TABLE_PAGES (the platform copy's day partitions, the ingest queue under a large
 * ingest) are analysed at a target of 10 on both: 3,000 rows, about 40 ms on the embedded store and
 * 0.06 CPU-s on Postgres. The reads of those tables follow their indexes (an organization's or an
 * agent's newest records), which a coarser histogram does not change. Smaller ones keep the full
 * target, which some plans need (the marketplace search's trigram index is chosen from the
 * description's most common values).
 *
 * Every process on a store keeps its own rounds (each worker, each API), and a table that grows by
 * a tenth between rounds (the day partition a worker fills) would be analysed by each of them, one
 * after the other, every interval: a worker and an API analysed the platform copy's partition twice
 * in a ten-second run. So a round leaves a table whose last analysis (by any process: Postgres's
 * statistics of the table, `pg_stat_get_last_analyze_time`) is younger than half the keeper's
 * interval: processes whose rounds fall close together analyse it once between them, and a
 * process's own analysis of the round before, one interval ago, does not hold back its next.
 */
import type { Sql } from './sql.js';

/** The tables whose statistics are missing or behind their size (see the top of this file). */
const STALE_TABLES = `
select c.relname as name, pg_relation_size(c.oid) / current_setting('block_size')::int as pages
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = current_schema() and c.relkind = 'r'
  and pg_relation_size(c.oid) > 0
  and (c.reltuples < 0
       or abs(pg_relation_size(c.oid) / current_setting('block_size')::int - c.relpages) > 10 + c.relpages / 10)
  and coalesce(greatest(pg_stat_get_last_analyze_time(c.oid), pg_stat_get_last_autoanalyze_time(c.oid))
               < now() - $1::float8 * interval '1 millisecond', true)
order by c.relname`;

/** Tables over this many pages (8 KB each) are analysed from a smaller sample (above). */
export const LARGE_TABLE_PAGES = 1000;
/** The statistics target of those tables' analyses. */
const LARGE_TABLE_TARGET = 10;

/** Whether the server analyses tables itself (Postgres with autovacuum on). */
export async function serverAnalyses(sql: Sql): Promise<boolean> {
  if (sql.kind === 'pglite') return false;
  const rows = await sql.query<{ on: boolean }>("select current_setting('autovacuum') = 'on' as on");
  return rows[0]?.on === true;
}

/**
 * One round: analyses each stale table, leaving those analysed (by any process) less than
 * `recentMs` ago; resolves to the names of those analysed.
 */
export async function analyzeStaleTables(sql: Sql, opts: { recentMs?: number } = {}): Promise<string[]> {
  const stale = await sql.query<{ name: string; pages: number | string }>(STALE_TABLES, [opts.recentMs ?? 0], { background: true });
  for (const { name, pages } of stale) {
    const statement = `analyze "${name.replaceAll('"', '""')}"`;
    if (Number(pages) <= LARGE_TABLE_PAGES) await sql.query(statement, [], { background: true });
    else if (sql.kind === 'pglite') {
      // Behind the other statements on the embedded store (a large table's sample takes tens of ms).
      // One connection: the setting holds on it until reset, and it bears on ANALYZE only.
      await sql.query(`set default_statistics_target = ${LARGE_TABLE_TARGET}`, [], { background: true });
      try {
        await sql.query(statement, [], { background: true });
      } finally {
        await sql.query('reset default_statistics_target', [], { background: true });
      }
    } else {
      // A pool: the setting must be on the connection that analyses, and only while it does.
      await sql.transaction(async (tx) => {
        await tx.query(`set local default_statistics_target = ${LARGE_TABLE_TARGET}`);
        await tx.queryThenCommit(statement);
      });
    }
  }
  return stale.map((t) => t.name);
}

export interface StatisticsKeeper {
  /** Stops the rounds, after the one running (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Runs a round every `intervalMs` (none when 0, or when the server analyses itself). A failed round
 * is reported to `onError` and the next one tried as usual.
 */
export async function keepStatistics(sql: Sql, opts: { intervalMs: number; onError(e: Error): void }): Promise<StatisticsKeeper> {
  if (opts.intervalMs <= 0 || (await serverAnalyses(sql))) return { stop: async () => {} };
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(() => (stopped ? undefined : analyzeStaleTables(sql, { recentMs: opts.intervalMs / 2 }).catch((e: Error) => opts.onError(e))));
  }, opts.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
