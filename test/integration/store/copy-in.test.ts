/**
 * COPY ... FROM STDIN (store/copy-in.ts) against a real server: rows larger than a CopyData
 * message, and rows cut between messages, arrive whole and in order, in messages no larger than
 * COPY_MESSAGE_BYTES. A Postgres connection the server cuts just as a query ends (store/sql.ts): a
 * COPY on a pooled client whose connection is cut as it answers does not end the process, nor
 * does a cut connection handed to a waiting transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { openSql } from '../../../src/store/sql.js';
import { COPY_MESSAGE_BYTES } from '../../../src/store/copy-in.js';

describe('COPY data in messages', () => {
  let db: TestDatabase;
  let proxy: Server | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    if (proxy) await new Promise((resolve) => proxy!.close(resolve));
    await db?.drop();
  });

  /** A loopback proxy to the test database that notes the length of each CopyData message the client sends. */
  async function countingProxy(lengths: number[]): Promise<string> {
    const target = new URL(db.url);
    const [pgHost, pgPort] = [target.hostname, Number(target.port || 5432)];
    proxy = createServer((client) => {
      const server = connect(pgPort, pgHost);
      server.pipe(client);
      client.on('error', () => server.destroy());
      server.on('error', () => client.destroy());
      // The start-up message has no type byte; every message after it is a type byte and a 4-byte length.
      let pending = Buffer.alloc(0);
      let started = false;
      client.on('data', (chunk: Buffer) => {
        server.write(chunk);
        pending = Buffer.concat([pending, chunk]);
        for (;;) {
          if (!started) {
            if (pending.length < 4 || pending.length < pending.readInt32BE(0)) break;
            pending = pending.subarray(pending.readInt32BE(0));
            started = true;
            continue;
          }
          if (pending.length < 5 || pending.length < 1 + pending.readInt32BE(1)) break;
          const length = pending.readInt32BE(1);
          if (pending[0] === 0x64) lengths.push(length - 4);
          pending = pending.subarray(1 + length);
        }
      });
    });
    await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
    target.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    return target.toString();
  }

  it('sends rows larger than a message, and rows cut between messages, whole and in order', async () => {
    const lengths: number[] = [];
    const sql = await openSql({ databaseUrl: await countingProxy(lengths), maxConnections: 1 });
    try {
      await sql.exec('create table copied_big (n int not null, s text not null)');
      // A row of three messages' worth, rows side by side in one buffer (written as one view), and
      // rows of their own whose sizes put message boundaries inside them.
      const big = `0\t${'x'.repeat(3 * COPY_MESSAGE_BYTES)}\n`;
      const packed = Buffer.from(Array.from({ length: 500 }, (_, i) => `${i + 1}\t${'y'.repeat(97 + (i % 13))}\n`).join(''));
      const own = Array.from({ length: 40 }, (_, i) => Buffer.from(`${i + 501}\t${String.fromCharCode(97 + (i % 26)).repeat(5000 + i * 37)}\n`));
      const rows = [Buffer.from(big), packed.subarray(0, 20_000), packed.subarray(20_000), ...own];
      expect(await sql.copyIn!('copy copied_big (n, s) from stdin', rows)).toBe(541);
      const stored = await sql.query<{ n: number; s: string }>('select n, s from copied_big order by n');
      const expected = Buffer.concat(rows).toString().split('\n').filter(Boolean).map((line) => {
        const [n, s] = line.split('\t');
        return { n: Number(n), s: s! };
      });
      expect(stored).toEqual(expected);
      const total = rows.reduce((n, r) => n + r.length, 0);
      expect(lengths.reduce((n, l) => n + l, 0)).toBe(total);
      expect(Math.max(...lengths)).toBe(COPY_MESSAGE_BYTES);
      expect(lengths.length).toBe(Math.ceil(total / COPY_MESSAGE_BYTES));
    } finally {
      await sql.close();
    }
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
    // The COPY's table, made through a direct connection (the proxy cuts its first one).
    const direct = await openSql({ databaseUrl: db.url, maxConnections: 1 });
    try {
      await direct.exec('create table copied (s text not null)');
    } finally {
      await direct.close();
    }
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

  it('does not end the process on a COPY: the copy answers, the client leaves the pool, the next query runs', async () => {
    const sql = await openSql({ databaseUrl: await cuttingProxy(), maxConnections: 1 });
    try {
      // Unheard, the 'error' is thrown from the socket's data handler: an uncaught exception, which fails the run.
      expect(await sql.copyIn!('copy copied (s) from stdin', [Buffer.from('ab\n'), Buffer.from('cd\n')])).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await sql.query<{ s: string }>('select s from copied order by s')).toEqual([{ s: 'ab' }, { s: 'cd' }]);
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
