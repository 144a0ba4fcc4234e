/**
 * The embedded store on disk: PGlite writes its files with synchronous calls inside the statement
 * that writes them, so what Postgres writes besides the statements' own data is paid by every
 * statement waiting behind it.
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
});
