/** The kernel's keyset paging: the N-part cursor, the after-condition in each direction, the n+1 page cut. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { keysetAfter, keysetCursor, keysetFetch, keysetOrder, keysetPage, type KeysetColumn, type SortDirection } from '../../../src/api/kernel/pagination.js';
import { openSql, type Sql } from '../../../src/store/sql.js';

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
const OWN_BAD = () => new AppError(400, 'BAD_CURSOR', 'not ours');

describe('keyset cursor', () => {
  it('round-trips every part type, with and without a tag', () => {
    const at = new Date('2026-11-26T01:02:03.004Z');
    const c = keysetCursor(['instant', 'epochMs', 'integer', 'text']);
    expect(c.decode(c.encode([at, at, -1, 'id with spaces/é']))).toEqual([at, at, -1, 'id with spaces/é']);
    const tagged = keysetCursor(['integer', 'text'], { tag: '-createdAt' });
    expect(JSON.parse(Buffer.from(tagged.encode([5, 'x']), 'base64url').toString())).toEqual(['-createdAt', 5, 'x']);
    expect(tagged.decode(tagged.encode([5, 'x']))).toEqual([5, 'x']);
  });

  it('refuses a tampered or foreign cursor with VALIDATION_FAILED naming cursor, or the codec own error', () => {
    const c = keysetCursor(['instant', 'text']);
    const refused = (raw: string) => expect(() => c.decode(raw)).toThrow(expect.objectContaining({ statusCode: 400, code: 'VALIDATION_FAILED', details: expect.objectContaining({ field: 'cursor' }) }));
    const good = c.encode([new Date('2026-01-01T00:00:00.000Z'), 'a']);
    refused(`${good.slice(0, -2)}*`);
    refused('x'.repeat(1025));
    refused(b64(['2026-01-01T00:00:00.000Z']));
    refused(b64(['2026-01-01T00:00:00.000Z', 'a', 'b']));
    refused(b64(['2026-01-01T00:00:00Z', 'a']));
    refused(b64(['0000-01-01T00:00:00.000Z', 'a']));
    refused(b64(['2026-01-01T00:00:00.000Z', '']));
    refused(b64(['2026-01-01T00:00:00.000Z', 'a\u0000b']));
    refused(b64(['2026-01-01T00:00:00.000Z', 'a\ud800']));
    refused(b64({ at: '2026-01-01T00:00:00.000Z', id: 'a' }));
    refused(Buffer.from('not json').toString('base64url'));
    const own = keysetCursor(['epochMs', 'text'], { bad: OWN_BAD });
    expect(() => own.decode(b64([9e15, 'x']))).toThrow(expect.objectContaining({ code: 'BAD_CURSOR' }));
    expect(() => own.decode(b64([1.5, 'x']))).toThrow(expect.objectContaining({ code: 'BAD_CURSOR' }));
    const sorted = keysetCursor(['integer', 'text'], { tag: 'durationMs', bad: OWN_BAD });
    expect(() => sorted.decode(keysetCursor(['integer', 'text'], { tag: '-durationMs' }).encode([1, 'x']))).toThrow(expect.objectContaining({ code: 'BAD_CURSOR' }));
  });

  it('writes the after-condition and the order for each direction, dates as ISO text', () => {
    const params: unknown[] = [];
    const p = (v: unknown) => `$${params.push(v)}`;
    const cols: KeysetColumn[] = [{ expr: 'at', cast: 'timestamptz' }, { expr: 'id' }];
    expect(keysetAfter(cols, [new Date(0), 'z'], 'desc', p)).toBe('(at, id) < ($1::timestamptz, $2)');
    expect(keysetAfter(cols, [new Date(0), 'z'], 'asc', p)).toBe('(at, id) > ($3::timestamptz, $4)');
    expect(params).toEqual(['1970-01-01T00:00:00.000Z', 'z', '1970-01-01T00:00:00.000Z', 'z']);
    expect(keysetOrder(cols, 'desc')).toBe('at desc, id desc');
  });

  it('cuts a page from n+1 rows: a next cursor only when more follow', () => {
    expect(keysetFetch(3)).toBe(4);
    expect(keysetPage([1, 2, 3, 4], 3, (r) => `after-${r}`)).toEqual({ items: [1, 2, 3], nextCursor: 'after-3' });
    expect(keysetPage([1, 2, 3], 3, (r) => `after-${r}`)).toEqual({ items: [1, 2, 3], nextCursor: null });
    expect(keysetPage([], 3, (r) => `after-${String(r)}`)).toEqual({ items: [], nextCursor: null });
  });
});

describe('keyset paging in a statement', () => {
  let sql: Sql;
  beforeAll(async () => {
    sql = await openSql({ dataDir: 'memory://' });
    await sql.exec('create table rows (at timestamptz not null, id text not null)');
    // Ties on the first part: three rows share one time.
    const same = '2026-01-02T00:00:00.000Z';
    for (const [at, id] of [['2026-01-01T00:00:00.000Z', 'a'], [same, 'b'], [same, 'c'], [same, 'd'], ['2026-01-03T00:00:00.000Z', 'e']]) {
      await sql.query('insert into rows (at, id) values ($1::timestamptz, $2)', [at, id]);
    }
  }, 300_000);
  afterAll(async () => sql?.close());

  const cursor = keysetCursor(['instant', 'text']);
  const cols: KeysetColumn[] = [{ expr: 'at', cast: 'timestamptz' }, { expr: 'id' }];

  interface Row { at: Date; id: string }

  /** Every page of `limit` rows in `direction`, following the cursors. */
  async function walk(direction: SortDirection, limit: number): Promise<string[][]> {
    const pages: string[][] = [];
    let next: string | null = null;
    do {
      const params: unknown[] = [keysetFetch(limit)];
      const after: string = next === null ? '' : `where ${keysetAfter(cols, cursor.decode(next), direction, (v) => `$${params.push(v)}`)}`;
      const rows: Row[] = await sql.query<Row>(`select at, id from rows ${after} order by ${keysetOrder(cols, direction)} limit $1`, params);
      const page: { items: Row[]; nextCursor: string | null } = keysetPage(rows, limit, (last: Row) => cursor.encode([last.at, last.id]));
      pages.push(page.items.map((r) => r.id));
      next = page.nextCursor;
    } while (next !== null);
    return pages;
  }

  it('pages descending and ascending through ties on the first part, each row once', async () => {
    expect(await walk('desc', 2)).toEqual([['e', 'd'], ['c', 'b'], ['a']]);
    expect(await walk('asc', 2)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(await walk('desc', 5)).toEqual([['e', 'd', 'c', 'b', 'a']]);
  });
});
