/**
 * The embedded store on disk: PGlite writes its files with synchronous calls on the process's
 * one thread, so what Postgres writes besides the statements' own data is paid by every request.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/store.js';

describe('the embedded store on disk', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'logdrain-wal-'));
    store = await openStore({ dataDir: dir });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a WAL segment without writing it full of zeros first: the file has its size, not its blocks', async () => {
    // Zero-filling a 16 MiB segment was 16 synchronous writes of 1 MiB on the API's thread, inside
    // whichever statement crossed into it.
    const segments = () => readdirSync(join(dir, 'pg_wal')).filter((f) => /^[0-9A-F]{24}$/.test(f));
    const before = new Set(segments());
    await store.sql.query('select pg_switch_wal()');
    await store.sql.query("insert into queue_cursors (consumer, seq) values ('wal', 1)");
    const created = segments().filter((f) => !before.has(f));
    expect(created.length).toBeGreaterThan(0);
    for (const f of created) {
      const { size, blocks } = statSync(join(dir, 'pg_wal', f));
      expect(size).toBe(16 * 1024 * 1024);
      expect(blocks * 512).toBeLessThan(size / 4);
    }
  });

  it('analyses a table from a sample of 3,000 rows, not 30,000: ANALYZE is one synchronous statement on the API\'s thread', async () => {
    await store.sql.query('create table analyse_sample (n int)');
    await store.sql.query('insert into analyse_sample select generate_series(1, 40000)');
    await store.sql.query('analyze analyse_sample');
    // The histogram has at most default_statistics_target + 1 bounds: Postgres's default gives 101.
    const rows = await store.sql.query<{ bounds: number }>(
      "select array_length(histogram_bounds::text::int[], 1) as bounds from pg_stats where tablename = 'analyse_sample' and attname = 'n'",
    );
    expect(rows[0]?.bounds).toBeLessThanOrEqual(11);
    expect(rows[0]?.bounds).toBeGreaterThan(1);
  });
});
