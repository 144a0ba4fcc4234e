/**
 * The embedded store on its own thread (pglite-thread.ts): the API's event loop keeps turning
 * while PGlite computes, and the `Sql` contract holds across the thread: database errors with
 * their fields, transactions (rolled back on a throw, nested ones inside the outer, nothing
 * interleaved), notifications, parameters as PGlite took them, a dead thread failing statements as
 * an unreachable store, and a close that lets the process exit. Order and counts, never durations.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSql, type Sql } from '../../../src/store/sql.js';
import { PGlite } from '@electric-sql/pglite';
import { openPgliteThread, storeThreadOf } from '../../../src/store/pglite-thread.js';
import { isStoreUnavailable, withStoreErrorsMarked } from '../../../src/store/unavailable.js';
import { isPermanentWriteError } from '../../../src/store/write-errors.js';

const caught = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a rejection'); }, (e: unknown) => e);
/** A statement that computes inside PGlite for a while (a few hundred ms on a loaded machine). */
const LONG = 'select sum(i)::int8 as s from generate_series(1, 3000000) i';
/** A shorter one, for order. */
const BULK = 'select sum(i) from generate_series(1, 300000) i';

describe('the embedded store on its own thread', () => {
  let sql: Sql;
  beforeEach(async () => {
    sql = await openSql({ dataDir: 'memory://' });
  });
  afterEach(async () => {
    await sql.close();
  });

  it('leaves the event loop turning while a statement computes', async () => {
    let turns = 0;
    let running = true;
    const turn = () => {
      if (!running) return;
      turns++;
      setImmediate(turn);
    };
    setImmediate(turn);
    const [row] = await sql.query<{ s: number }>(LONG);
    running = false;
    expect(row!.s).toBe(4500001500000);
    // PGlite on this thread computes the whole statement inside one turn: a turn or two at most.
    expect(turns).toBeGreaterThan(20);
  });

  it('raises a database error with its fields, as PGlite raised it', async () => {
    await sql.exec('create table t (id int primary key, v text not null)');
    await sql.query('insert into t values (1, $1)', ['a']);
    const dup = (await caught(sql.query('insert into t values (1, $1)', ['b']))) as Record<string, unknown>;
    expect(dup).toBeInstanceOf(Error);
    expect(dup).toMatchObject({ code: '23505', constraint: 't_pkey', table: 't', schema: 'public', severity: 'ERROR', detail: 'Key (id)=(1) already exists.' });
    expect(dup.message).toBe('duplicate key value violates unique constraint "t_pkey"');
    expect(isPermanentWriteError(dup)).toBe(true);
    const nul = (await caught(sql.query('insert into t values (2, null)'))) as Record<string, unknown>;
    expect(nul).toMatchObject({ code: '23502', column: 'v', table: 't' });
    const syntax = (await caught(sql.query('selec 1'))) as Record<string, unknown>;
    expect(syntax).toMatchObject({ code: '42601', position: '1' });
  });

  it('rolls a transaction back when its function throws, and runs a nested one inside the outer', async () => {
    await sql.exec('create table t (id int primary key)');
    const boom = new Error('boom');
    expect(await caught(sql.transaction(async (tx) => {
      await tx.query('insert into t values (1)');
      throw boom;
    }))).toBe(boom);
    expect(await caught(sql.transaction(async (tx) => {
      await tx.query('insert into t values (2)');
      await tx.transaction(async (inner) => inner.query('insert into t values (3)'));
      throw boom;
    }))).toBe(boom);
    const n = await sql.transaction(async (tx) => {
      await tx.transaction(async (inner) => inner.query('insert into t values (4)'));
      return (await tx.queryThenCommit<{ n: number }>('select count(*)::int as n from t'))[0]!.n;
    });
    expect(n).toBe(1);
    expect(await sql.query('select id from t')).toEqual([{ id: 4 }]);
  });

  it('lets no statement from outside run inside an open transaction', async () => {
    await sql.exec('create table t (id int primary key)');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const tx = sql.transaction(async (t) => {
      await t.query('insert into t values (1)');
      await held;
      order.push('transaction ends');
      throw new Error('rolled back');
    }).catch(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    const outside = sql.query<{ n: number }>('select count(*)::int as n from t').then((rows) => {
      order.push('outside');
      return rows[0]!.n;
    });
    release();
    await tx;
    expect(await outside).toBe(0);
    expect(order).toEqual(['transaction ends', 'outside']);
  });

  it('calls a listener for a NOTIFY sent in the store, until it stops listening', async () => {
    let heard = 0;
    const stop = await sql.listen('changes', () => heard++);
    await sql.query("select pg_notify('changes', 'x')");
    await sql.transaction((tx) => tx.query("select pg_notify('changes', 'y')"));
    await sql.query("select pg_notify('elsewhere', 'z')");
    expect(heard).toBe(2);
    await stop();
    await sql.query("select pg_notify('changes', 'x')");
    expect(heard).toBe(2);
  });

  it('takes Buffers as PGlite did: bytes for bytea, their text for text', async () => {
    const big = Buffer.from('0123456789abcdef'.repeat(1024));
    const rows = await sql.query<{ b: Uint8Array; t: string }>('select $1::bytea as b, $2::text as t', [big.subarray(16, 32), Buffer.from('héllo')]);
    expect(Buffer.from(rows[0]!.b).toString()).toBe('0123456789abcdef');
    expect(rows[0]!.t).toBe('héllo');
  });

  it('runs request statements before background ones queued earlier', async () => {
    const order: string[] = [];
    const bulk = [1, 2, 3].map((i) => sql.query(BULK, [], { background: true }).then(() => order.push(`bulk ${i}`)));
    const request = sql.query('select 1').then(() => order.push('request'));
    await Promise.all([...bulk, request]);
    expect(order.indexOf('request')).toBeLessThan(2);
  });
});

describe('a store whose thread dies', () => {
  it('fails the statements waiting and every later one as the store being unreachable', async () => {
    const raw = await openSql({ dataDir: 'memory://' });
    const sql = withStoreErrorsMarked(raw);
    const running = caught(sql.query(LONG));
    const queued = caught(sql.query('select 1'));
    const inTx = caught(sql.transaction((tx) => tx.query(LONG)));
    await new Promise((resolve) => setImmediate(resolve));
    await storeThreadOf(raw)!.terminate();
    for (const e of await Promise.all([running, queued, inTx])) expect(isStoreUnavailable(e)).toBe(true);
    expect(isStoreUnavailable(await caught(sql.query('select 1')))).toBe(true);
    expect(isStoreUnavailable(await caught(sql.transaction((tx) => tx.query('select 1'))))).toBe(true);
    await sql.close();
  });
});

describe('closing the embedded store', () => {
  it('releases the data directory to the next open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logdrain-thread-'));
    try {
      const first = await openSql({ dataDir: dir });
      await first.exec('create table kept (v int); insert into kept values (7)');
      await first.close();
      expect(await caught(first.query('select 1'))).toBeInstanceOf(Error);
      const second = await openSql({ dataDir: dir });
      expect(await second.query('select v from kept')).toEqual([{ v: 7 }]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['once closed', 'await stop();\n      await sql.close();'],
    ['idle and left open', 'await stop();'],
  ])('lets the process exit on its own: %s', async (_, end) => {
    const sqlModule = JSON.stringify(new URL('../../../src/store/sql.ts', import.meta.url).href);
    const script = `
      const { openSql } = await import(${sqlModule});
      const sql = await openSql({ dataDir: 'memory://' });
      const stop = await sql.listen('c', () => {});
      await sql.query('select 1');
      ${end}
      console.log('done');
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // A bound, not a measure: a process held open by the thread would never exit.
    const bound = setTimeout(() => child.kill(), 30_000);
    const code = await new Promise((resolve) => child.on('exit', resolve));
    clearTimeout(bound);
    expect(out.trim()).toBe('done');
    expect(code).toBe(0);
  });
});

describe('a store in memory and its starting cluster', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'logdrain-template-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the cluster initdb made, before its first statement, for the next store to start from', async () => {
    const path = join(dir, 'cluster.tar.gz');
    const first = await openPgliteThread('memory://', { templatePath: path });
    await first.exec('create table mine (id int)');
    await first.close();
    expect(existsSync(path)).toBe(true);
    // The kept cluster is the pristine one: what the first store did afterwards is not in it.
    const second = await openPgliteThread('memory://', { templatePath: path });
    expect(await second.query<{ n: number }>("select count(*)::int as n from pg_tables where tablename = 'mine'")).toEqual([{ n: 0 }]);
    await second.close();
  });

  it('starts from the cluster found, and from initdb when that cannot be loaded', async () => {
    const path = join(dir, 'cluster.tar.gz');
    const maker = await PGlite.create();
    await maker.exec('create table marker (id int); insert into marker values (7)');
    writeFileSync(path, new Uint8Array(await (await maker.dumpDataDir('gzip')).arrayBuffer()));
    await maker.close();
    const loaded = await openPgliteThread('memory://', { templatePath: path });
    expect(await loaded.query('select id from marker')).toEqual([{ id: 7 }]);
    await loaded.close();

    writeFileSync(path, 'not a cluster');
    const fresh = await openPgliteThread('memory://', { templatePath: path });
    expect(await fresh.query<{ n: number }>("select count(*)::int as n from pg_tables where tablename = 'marker'")).toEqual([{ n: 0 }]);
    await fresh.exec('create table t (id int)');
    await fresh.close();
  });
});
