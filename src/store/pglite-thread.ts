/**
 * The embedded store (PGlite) on a thread of its own. PGlite runs each
 * statement synchronously, in WebAssembly, on the thread that calls it: on the
 * API's thread a large write held the event loop for tens of milliseconds at a
 * time, every request waiting. Here PGlite runs in a worker thread
 * (pglite-worker.ts) and this thread only posts statements and receives their
 * rows, behind the same `Sql` as Postgres.
 *
 * Statements go one at a time, through the turn gate (event-loop.ts): the thread
 * runs what it is posted in order, so a statement posted behind queued bulk ones
 * would wait for all of them; held here, a short request's statement waits only
 * for the one running, and background statements wait behind the others. A
 * transaction holds the gate from its BEGIN to its COMMIT: nothing else runs in it.
 *
 * A thread that dies (an uncaught error in PGlite, an abort of its WebAssembly)
 * fails every statement waiting and every later one with a connection failure
 * (SQLSTATE 08006), which unavailable.ts counts as the store being unreachable.
 */
import type { Worker } from 'node:worker_threads';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { turnGate } from '../event-loop.js';
import { startModuleWorker } from '../threads.js';
import { lockDataDir } from './data-dir-lock.js';
import type { QueryOptions, Sql } from './sql-types.js';
import type { ErrorFields, Reply, Request, Start, WasmModule } from './pglite-worker.js';

/** A request without its id (given as it is posted). */
type Body = Request extends infer R ? (R extends Request ? Omit<R, 'id'> : never) : never;

/** The store's thread (threads.ts: the build's JavaScript, or the source through tsx). */
function startWorker(start: Start): Worker {
  return startModuleWorker(new URL('./pglite-worker', import.meta.url), { workerData: start });
}

/**
 * PGlite's WebAssembly, compiled once for the process and handed to each store's thread. PGlite
 * keeps its compiled modules in a cache of its own, one per thread: every thread would compile
 * them anew, and run its first statements (initdb's, for a store in memory) in baseline code
 * until it had optimized them again. A module shared between threads shares its optimized code.
 */
let compiled: Promise<Start['modules']> | undefined;
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly;
function pgliteModules(): Promise<Start['modules']> {
  return (compiled ??= (async () => {
    const dist = pgliteDist();
    const [pglite, initdb] = await Promise.all(['pglite.wasm', 'initdb.wasm'].map(async (f) => wasm.compile(await readFile(join(dist, f)))));
    return { pglite: pglite!, initdb: initdb! };
  })());
}

/** The error PGlite raised, as an Error of this thread with the same fields. */
function errorOf(fields: ErrorFields): Error {
  const { message, stack: _stack, ...rest } = fields;
  return Object.assign(new Error(message), rest);
}

/** What fails statements once the thread has died: a connection failure, as a lost server's. */
function threadDied(cause: unknown): Error {
  const why = cause instanceof Error ? cause.message : `exit code ${String(cause)}`;
  return Object.assign(new Error(`Connection terminated: the embedded store's thread stopped (${why})`), { code: '08006', cause });
}

/** The worker of each open store, for tests that end it as a crash would. */
const workers = new WeakMap<Sql, Worker>();
export const storeThreadOf = (sql: Sql): Worker | undefined => workers.get(sql);

/**
 * Parameters as posted: a Buffer that is a view of a larger memory copied out (structured clone
 * would copy the whole of that memory), and the copies moved to the thread rather than copied
 * again. `buffers`: which were Buffers (see pglite-worker.ts).
 */
function posted(params: readonly unknown[] | undefined): { params: unknown[] | undefined; buffers: number[]; transfer: ArrayBuffer[] } {
  const values = params ? [...params] : undefined;
  const buffers: number[] = [];
  const transfer: ArrayBuffer[] = [];
  values?.forEach((v, i) => {
    if (!(v instanceof Uint8Array)) return;
    if (Buffer.isBuffer(v)) buffers.push(i);
    const whole = v.buffer instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength;
    if (!whole) {
      const copy = v.slice();
      values[i] = copy;
      transfer.push(copy.buffer);
    }
  });
  return { params: values, buffers, transfer };
}

/** Where PGlite's files are. */
const pgliteDist = () => dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));

/**
 * Where a store in memory keeps the pristine cluster initdb made, for the next one to start from:
 * the project's `node_modules/.cache` (where tools keep what they can make again), named by the
 * PGlite build (its WebAssembly's size and time), so another version's is never loaded. Found once
 * for the process, as the WebAssembly is compiled once.
 */
let templatePath: Promise<string> | undefined;
export function clusterTemplatePath(): Promise<string> {
  return (templatePath ??= (async () => {
    const dist = pgliteDist();
    const wasmFile = await stat(join(dist, 'pglite.wasm'));
    return join(dist, '..', '..', '..', '.cache', 'logdrain', `pglite-cluster-${wasmFile.size}-${Math.floor(wasmFile.mtimeMs)}.tar.gz`);
  })());
}

/** The starting cluster at `path`, read if there is one. */
async function templateAt(path: string): Promise<NonNullable<Start['template']>> {
  const cluster = await readFile(path).catch(() => undefined);
  return cluster ? { path, cluster } : { path };
}

/** `templatePath`: where a store in memory finds or keeps its starting cluster (clusterTemplatePath). */
export async function openPgliteThread(dataDir: string, opts: { templatePath?: string } = {}): Promise<Sql> {
  const memory = dataDir === 'memory://';
  // One process per directory, checked before anything in it is touched (data-dir-lock.ts).
  const lock = memory ? undefined : lockDataDir(dataDir);
  let worker: Worker;
  try {
    const template = memory ? await templateAt(opts.templatePath ?? (await clusterTemplatePath())) : undefined;
    worker = startWorker({ dataDir: memory ? undefined : dataDir, modules: await pgliteModules(), ...(template ? { template } : {}) });
  } catch (e) {
    lock?.release();
    throw e;
  }
  // The thread keeps the process alive only while a statement is out (as PGlite in this thread did).
  worker.unref();
  const pending = new Map<number, { resolve: (reply: { rows?: unknown[]; listener?: number }) => void; reject: (e: Error) => void }>();
  const notified = new Map<number, () => void>();
  let nextId = 1;
  /** Why statements fail from now on: the thread died, or the store was closed. */
  let ended: (() => Error) | undefined;
  let closing = false;

  const settle = (id: number) => {
    const p = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return p;
  };
  worker.on('message', (reply: Reply) => {
    if ('notify' in reply) return notified.get(reply.notify)?.();
    const p = settle(reply.id);
    if ('error' in reply) p?.reject(errorOf(reply.error));
    else p?.resolve(reply);
  });
  const died = (cause: unknown) => {
    if (ended) return;
    const e = threadDied(cause);
    ended = () => e;
    for (const id of [...pending.keys()]) settle(id)?.reject(e);
  };
  worker.on('error', died);
  worker.on('exit', (code) => (closing ? undefined : died(code)));

  const call = (req: Body, transfer?: ArrayBuffer[], id = nextId++): Promise<{ rows?: unknown[]; listener?: number }> => {
    if (ended) return Promise.reject(ended());
    return new Promise((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ ...req, id }, transfer);
      } catch (e) {
        // A parameter structured clone cannot copy (a function, a symbol): refused here, as a statement.
        settle(id)?.reject(e as Error);
      }
    });
  };

  try {
    // The start's answer comes as id 0.
    await new Promise((resolve, reject) => {
      worker.ref();
      pending.set(0, { resolve, reject });
    });
  } catch (e) {
    closing = true;
    await worker.terminate();
    lock?.release();
    throw e;
  }

  // Handed on at once: a statement's answer arrives as a message, in a turn of its own, and handing
  // on is one postMessage; waiting for the next turn once the budget is spent only left the store's
  // thread idle while the API's thread went round its loop.
  const gate = turnGate(Number.POSITIVE_INFINITY);
  const gated = async <R>(inTx: boolean, run: () => Promise<R>, background = false): Promise<R> => {
    if (inTx) return run();
    await gate.enter(background);
    try {
      return await run();
    } finally {
      gate.leave();
    }
  };
  const wrap = (inTx: boolean): Sql => {
    const query = <T>(text: string, params?: readonly unknown[], options?: QueryOptions) =>
      gated(
        inTx,
        async () => {
          const { params: values, buffers, transfer } = posted(params);
          return (await call({ op: 'query', text, params: values, buffers }, transfer)).rows as T[];
        },
        options?.background,
      );
    const sql: Sql = {
      kind: 'pglite',
      query,
      // The transaction commits once `fn` resolves: its statements are not sent over a network.
      queryThenCommit: query,
      exec: (text) =>
        gated(inTx, async () => {
          await call({ op: 'exec', text });
        }),
      transaction: <T>(fn: (tx: Sql) => Promise<T>): Promise<T> => {
        if (inTx) return fn(sql);
        return gated(false, async () => {
          await call({ op: 'begin' });
          let result: T;
          try {
            result = await fn(wrap(true));
          } catch (e) {
            await call({ op: 'rollback' });
            throw e;
          }
          await call({ op: 'commit' });
          return result;
        });
      },
      listen: async (channel, onNotify) => {
        if (inTx) throw new Error('listen is not available inside a transaction');
        const { listener } = await call({ op: 'listen', channel });
        notified.set(listener!, () => onNotify());
        return async () => {
          notified.delete(listener!);
          await call({ op: 'unlisten', listener: listener! });
        };
      },
      close: async () => {
        if (inTx || closing) return;
        closing = true;
        try {
          if (!ended) await call({ op: 'close' });
        } finally {
          // PGlite has closed (or the thread died): the thread ends, if it has not yet on its own.
          const closed = new Error('PGlite is closed');
          ended ??= () => closed;
          await worker.terminate();
          for (const id of [...pending.keys()]) settle(id)?.reject(ended());
          lock?.release();
        }
      },
    };
    return sql;
  };
  const sql = wrap(false);
  workers.set(sql, worker);
  return sql;
}
