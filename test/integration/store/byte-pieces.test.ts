/**
 * A bytea parameter in pieces (store/byte-pieces.ts): the Bind message written piece by piece is
 * byte for byte the one pg's own serializer writes for the joined parameter, and Postgres (and
 * PGlite, which gets the pieces joined) reads the same bytes, on a pooled query and inside a
 * transaction; a failing statement leaves the pool usable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serialize } from 'pg-protocol';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import { BytePieces, writeBind } from '../../../src/store/byte-pieces.js';

describe('the Bind message in pieces', () => {
  it('is byte for byte what pg serializes for the joined bytes, text and null parameters', () => {
    const pieces = new BytePieces([Buffer.from('['), Buffer.from('{"a":"é"}'), Buffer.from(','), Buffer.alloc(0), Buffer.from('{"b":1}'), Buffer.from(']')]);
    const values = [pieces, '2026-11-24T00:00:00.000Z', null, 'ü', Buffer.from([0, 1, 2])];
    const written: Buffer[] = [];
    writeBind({ writable: true, write: (c) => written.push(Buffer.from(c)) > 0 }, values);
    const expected = serialize.bind({ values: values.map((v) => (v instanceof BytePieces ? v.joined() : v)) });
    expect(Buffer.concat(written).equals(expected)).toBe(true);
    // The records' bytes themselves are written, not copies of them.
    expect(written.length).toBeGreaterThan(values.length);
  });
});

describe.each(STORE_KINDS)('a query with a parameter in pieces on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  // 3,000 records of a few hundred bytes, multi-byte text among them: a parameter of about 1 MB.
  const records = Array.from({ length: 3000 }, (_, i) => Buffer.from(JSON.stringify({ n: i, text: `ключ ${'x'.repeat(i % 400)} ✓` })));
  const asPieces = () => {
    const pieces: Buffer[] = [Buffer.from('[')];
    records.forEach((r, i) => pieces.push(...(i > 0 ? [Buffer.from(','), r] : [r])));
    pieces.push(Buffer.from(']'));
    return new BytePieces(pieces);
  };
  const query = `select count(*)::int as n, sum((e->>'n')::int)::int as total, md5(string_agg(e->>'text', '|' order by (e->>'n')::int)) as digest
                 from json_array_elements(convert_from($1::bytea, 'UTF8')::json) e where $2::text = 'yes'`;
  const expected = async () => {
    const [row] = await store.sql.query<{ n: number; total: number; digest: string }>(query, [Buffer.concat([Buffer.from('['), Buffer.from(records.map((r) => r.toString()).join(',')), Buffer.from(']')]), 'yes']);
    return row;
  };

  it('reads the same bytes as the joined parameter, pooled and in a transaction', async () => {
    const want = await expected();
    expect(want).toMatchObject({ n: 3000, total: (2999 * 3000) / 2 });
    expect((await store.sql.query(query, [asPieces(), 'yes']))[0]).toEqual(want);
    expect(await store.sql.transaction(async (tx) => (await tx.query(query, [asPieces(), 'yes']))[0])).toEqual(want);
  });

  it('fails a statement the server refuses with the server error, and the next query runs', async () => {
    const broken = new BytePieces([Buffer.from('[{"n":'), Buffer.from(']')]);
    await expect(store.sql.query(query, [broken, 'yes'])).rejects.toThrow(/json/i);
    for (let i = 0; i < 6; i++) expect((await store.sql.query(query, [asPieces(), 'yes']))[0]).toMatchObject({ n: 3000 });
  });
});
