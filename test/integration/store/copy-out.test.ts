/**
 * `COPY ... TO STDOUT` on Postgres (store/copy-in.ts copyOutData, Sql.copyOut) and the binary
 * format's reader (store/binary-copy.ts): what a real server sends, read back field by field; a
 * copy larger than pg's receive buffer intact; a failing copy an error the client survives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { openSql, type Sql } from '../../../src/store/sql.js';
import { binaryTuples, int4ArrayOf, int8Of, textArrayOf } from '../../../src/store/binary-copy.js';

describe('COPY ... TO STDOUT on Postgres', () => {
  let db: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    db = await createTestDatabase();
    sql = await openSql({ databaseUrl: db.url, maxConnections: 2 });
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  it('answers the binary tuples as the server sent them: bigints, texts as bytes, nulls and arrays', async () => {
    const data = await sql.copyOut!(
      `copy (select * from (values
         (9007199254740991::bigint, 'é ✓ 😀 "q" \\ line
break'::text, null::text, array['a', '', 'b,"c"']::text[], array[1, -2, 2147483647]::int[], '{}'::int[]),
         (-5::bigint, ''::text, 'x'::text, '{}'::text[], array[0]::int[], array[7]::int[])
       ) as v) to stdout (format binary)`,
    );
    const tuples = [...binaryTuples(data)];
    expect(tuples).toHaveLength(2);
    const [a, b] = tuples as (Buffer | null)[][];
    expect(int8Of(a![0]!)).toBe(9007199254740991);
    expect(a![1]!.toString('utf8')).toBe('é ✓ 😀 "q" \\ line\nbreak');
    expect(a![2]).toBeNull();
    expect(textArrayOf(a![3]!)).toEqual(['a', '', 'b,"c"']);
    expect(int4ArrayOf(a![4]!)).toEqual([1, -2, 2147483647]);
    expect(int4ArrayOf(a![5]!)).toEqual([]);
    expect(int8Of(b![0]!)).toBe(-5);
    expect(b![1]!.length).toBe(0);
    expect(textArrayOf(b![3]!)).toEqual([]);
    expect(int4ArrayOf(b![5]!)).toEqual([7]);
  });

  it('keeps every byte of a copy far larger than one read of the socket', async () => {
    const data = await sql.copyOut!(`copy (select g, repeat(chr(97 + g % 26), 100000 + g) from generate_series(0, 39) as g) to stdout (format binary)`);
    const tuples = [...binaryTuples(data)];
    expect(tuples).toHaveLength(40);
    tuples.forEach((t, g) => {
      expect(t[0]!.readInt32BE(0)).toBe(g);
      const text = t[1]!;
      expect(text.length).toBe(100000 + g);
      expect(text.every((c) => c === 97 + (g % 26))).toBe(true);
    });
  });

  it('rejects a failing copy with the server\'s error, and the pool goes on', async () => {
    await expect(sql.copyOut!('copy (select 1 / 0) to stdout (format binary)')).rejects.toThrow(/division by zero/);
    await expect(sql.copyOut!('copy (select * from no_such_table) to stdout')).rejects.toThrow(/no_such_table/);
    expect(await sql.query<{ n: number }>('select 1 as n')).toEqual([{ n: 1 }]);
    // Inside a transaction too.
    const inTx = await sql.transaction(async (tx) => [...binaryTuples(await tx.copyOut!('copy (select 42::int) to stdout (format binary)'))]);
    expect(inTx[0]![0]!.readInt32BE(0)).toBe(42);
  });

  it('refuses data that is not COPY binary', () => {
    expect(() => [...binaryTuples(Buffer.from('1\tx\n'))]).toThrow(/not COPY binary data/);
  });
});
