/**
 * A bytea parameter in pieces (store/byte-pieces.ts): the Bind message written piece by piece is
 * byte for byte the one pg's own serializer writes for the joined parameter, and Postgres (and
 * PGlite, which gets the pieces joined) reads the same bytes, on a pooled query and inside a
 * transaction; a failing statement leaves the pool usable; a connection the server cuts just as
 * a query ends does not end the process, nor does one handed to a waiting transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serialize } from 'pg-protocol';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import { BytePieces, writeBind } from '../../../src/store/byte-pieces.js';
import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { openSql } from '../../../src/store/sql.js';

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

/**
 * A server that cuts a connection just as a query ends: its FATAL message (pg_terminate_backend,
 * a restart) can arrive in the same packet as the query's ReadyForQuery, so pg emits 'error' on a
 * client that is still checked out, before the query's caller has released it. Found by the
 * Postgres fault test (a worker exiting on such an 'error' nobody heard). A proxy on loopback
 * delivers exactly that, on the first connection only: the FATAL right after the first query's
 * ReadyForQuery, in one write, then the end of the connection.
 */
describe('a connection cut by the server just as a pooled query ends', () => {
  let db: TestDatabase;
  const proxies: Server[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const proxy of proxies) await new Promise((resolve) => proxy.close(resolve));
    await db?.drop();
  });

  /**
   * A loopback proxy to the test database whose first connection gets the server's FATAL in the
   * same packet as the ReadyForQuery that ends its first query, then is closed: what a client sees
   * when pg_terminate_backend lands just as its query ends. Answers the proxied database URL.
   */
  async function cuttingProxy(): Promise<string> {
    const target = new URL(db.url);
    const [pgHost, pgPort] = [target.hostname, Number(target.port || 5432)];
    let connections = 0;
    const proxy = createServer((client) => {
      const first = connections++ === 0;
      const server = connect(pgPort, pgHost);
      client.pipe(server);
      client.on('error', () => server.destroy());
      server.on('error', () => client.destroy());
      if (!first) {
        server.pipe(client);
        return;
      }
      // Server messages are a type byte and a 4-byte length; count ReadyForQuery ('Z'): the first
      // ends the start-up, the second the query.
      let pending = Buffer.alloc(0);
      let ready = 0;
      server.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        let at = 0;
        while (pending.length - at >= 5 && pending.length - at >= 1 + pending.readInt32BE(at + 1)) {
          const end = at + 1 + pending.readInt32BE(at + 1);
          if (pending[at] === 0x5a && ++ready === 2) {
            client.end(Buffer.concat([pending.subarray(0, end), fatal()]));
            server.destroy();
            return;
          }
          at = end;
        }
        client.write(pending.subarray(0, at));
        pending = pending.subarray(at);
      });
    });
    proxies.push(proxy);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    target.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    return target.toString();
  }

  it('does not end the process on a piecewise query: the query answers, the client leaves the pool, the next query runs', async () => {
    const sql = await openSql({ databaseUrl: await cuttingProxy(), maxConnections: 1 });
    try {
      const pieces = new BytePieces([Buffer.from('ab'), Buffer.from('cd')]);
      // Unheard, the 'error' is thrown from the socket's data handler: an uncaught exception, which fails the run.
      expect(await sql.query<{ s: string }>("select convert_from($1::bytea, 'UTF8') as s", [pieces])).toEqual([{ s: 'abcd' }]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await sql.query<{ n: number }>('select 1 as n')).toEqual([{ n: 1 }]);
    } finally {
      await sql.close();
    }
  });

  it('does not end the process when the client is handed to a waiting transaction: the transaction fails, the next query runs', async () => {
    // One connection: the transaction waits for the query's client, and the pool hands it over
    // from inside the socket's data handler, before the packet's FATAL is read.
    const sql = await openSql({ databaseUrl: await cuttingProxy(), maxConnections: 1 });
    try {
      const first = sql.query<{ n: number }>('select 1 as n');
      const waiting = sql.transaction((tx) => tx.query<{ n: number }>('select 2 as n'));
      // Unheard, the FATAL is an uncaught exception, which fails the run.
      expect(await first).toEqual([{ n: 1 }]);
      await expect(waiting).rejects.toThrow();
      expect(await sql.transaction((tx) => tx.query<{ n: number }>('select 3 as n'))).toEqual([{ n: 3 }]);
    } finally {
      await sql.close();
    }
  });
});

/** An ErrorResponse as Postgres sends it to a terminated backend's client. */
function fatal(): Buffer {
  const fields = Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([head, fields]);
}
