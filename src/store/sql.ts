/**
 * One SQL client interface over two connections: PGlite (embedded Postgres in
 * WebAssembly, the default, on a thread of its own: pglite-thread.ts) and a
 * real Postgres server through `pg`. Every repository in this folder is written
 * against `Sql` only, so the two run the same statements; the store tests run
 * against both.
 */
import pg from 'pg';
import { copyInRows } from './copy-in.js';
import { openPgliteThread } from './pglite-thread.js';
import type { QueryOptions, Sql } from './sql-types.js';

export type { QueryOptions, Sql } from './sql-types.js';
import { openPgTransaction, type PgTransaction } from './pg-transaction.js';

export interface OpenSqlOptions {
  databaseUrl?: string | undefined;
  /** PGlite location: a directory, or `memory://`. */
  dataDir?: string;
  /** Pool size for Postgres. */
  maxConnections?: number;
}

export async function openSql(options: OpenSqlOptions): Promise<Sql> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.maxConnections ?? 10);
  return openPgliteThread(options.dataDir ?? './data');
}

// pg parses int8 to string by default; every int8 this project stores fits a double.
pg.types.setTypeParser(20, (v) => Number(v));

function openPostgres(url: string, max: number): Sql {
  const pool = new pg.Pool({ connectionString: url, max });
  // A dropped server connection surfaces here; queries in flight fail on their own.
  pool.on('error', () => {});
  // A client released while a caller waits for one is handed over at once, from inside the socket's
  // data handler, but the waiter's own 'error' listener (checkedOut) is attached a microtask later.
  // A FATAL (pg_terminate_backend, a restart) in the same packet as the released query's
  // ReadyForQuery lands between the two, unheard: an uncaught exception. Every client listens for
  // the whole of its life; the error still fails the holder's next query, which discards it.
  pool.on('connect', (client) => client.on('error', () => {}));
  /** The Sql of a transaction on a checked-out client. */
  const inTransaction = (client: pg.PoolClient, tx: PgTransaction): Sql => ({
    kind: 'postgres',
    query: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => tx.query<T>(statement(text, params, options), params),
    queryThenCommit: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => tx.queryThenCommit<T>(statement(text, params, options), params),
    exec: async (text) => {
      await tx.begin();
      await client.query(text);
    },
    copyIn: async (text, rows) => {
      await tx.begin();
      return copyInRows(client, text, rows);
    },
    transaction: (fn) => fn(inTransaction(client, tx)),
    listen: () => Promise.reject(new Error('listen is not available inside a transaction')),
    close: async () => {},
  });
  return {
    kind: 'postgres',
    async query<T>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]> {
      return (await pool.query(statement(text, params, options))).rows as T[];
    },
    queryThenCommit(text, params, options) {
      return this.query(text, params, options);
    },
    exec: async (text) => {
      await pool.query(text);
    },
    // pool.query cannot run a custom query: check a client out as it would (released, and
    // discarded on an error, as pool.query does).
    copyIn: (text, rows) => checkedOut(pool, true, (client) => copyInRows(client, text, rows)),
    transaction: <T>(fn: (tx: Sql) => Promise<T>): Promise<T> =>
      checkedOut(pool, false, async (client, broke) => {
        const tx = openPgTransaction(client);
        try {
          const result = await fn(inTransaction(client, tx));
          await tx.commit();
          return result;
        } catch (e) {
          await tx.rollback().catch(broke);
          throw e;
        }
      }),
    listen: (channel, onNotify, onDown) => listenPostgres(url, channel, onNotify, onDown),
    close: () => pool.end(),
  };
}

/** A query config for `pg`: named (prepared once per connection) when the caller named it. */
function statement(text: string, params: readonly unknown[] | undefined, options: QueryOptions | undefined): pg.QueryConfig {
  return { text, values: params as unknown[] | undefined, ...(options?.prepare ? { name: options.prepare } : {}) };
}

/** How long a lost listening connection waits before it connects again. */
const RELISTEN_MS = 1000;

/**
 * LISTEN needs a session of its own (a pooled client goes back to the pool): one client per
 * listener, connected again after the server cuts it, with `onNotify` called then because
 * notifications sent while it was away are lost.
 */
async function listenPostgres(url: string, channel: string, onNotify: () => void, onDown?: () => void): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => {});
    c.on('notification', (n) => n.channel === channel && onNotify());
    c.on('end', () => {
      if (stopped || client !== c) return;
      client = undefined;
      onDown?.();
      again();
    });
    try {
      await c.connect();
      await c.query(`listen ${channel}`);
    } catch (e) {
      await c.end().catch(() => {});
      throw e;
    }
    client = c;
    if (stopped) await c.end().catch(() => {});
  };
  const again = () => {
    retry = setTimeout(() => {
      retry = undefined;
      if (stopped) return;
      connect().then(onNotify, again);
    }, RELISTEN_MS);
    retry.unref();
  };
  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}

/**
 * Runs `fn` on a client checked out of the pool, then gives it back. A checked-out client whose
 * connection the server cuts (a restart, pg_terminate_backend) emits 'error', even between its
 * query's answer and its release (every client's lifelong listener keeps that from ending the
 * process, see openPostgres); heard here, the client is discarded on release instead of going
 * back to the pool. `discardOnError`: any error of `fn` discards the client too (as pool.query
 * does); else only a cut connection or what `fn` reports through `broke` (a failed ROLLBACK) does.
 */
async function checkedOut<T>(pool: pg.Pool, discardOnError: boolean, fn: (client: pg.PoolClient, broke: (e: Error) => void) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const broke = (e: Error) => {
    broken ??= e;
  };
  client.on('error', broke);
  try {
    return await fn(client, broke);
  } catch (e) {
    if (discardOnError) broke(e as Error);
    throw e;
  } finally {
    client.removeListener('error', broke);
    client.release(broken);
  }
}
