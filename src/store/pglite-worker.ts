/**
 * The embedded store's thread (pglite-thread.ts): PGlite opened here, off the
 * API's thread, running the statements posted to it one message each and
 * answering with their rows or their error. A transaction stays open across
 * messages: `begin` enters PGlite's transaction, whose function then waits for
 * `commit` or `rollback`; the statements posted meanwhile run in it.
 */
import { constants } from 'node:fs';
import { access, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { PGlite, type PGliteOptions, type Transaction } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/** What the store's side posts: a statement, a transaction's step, a listener, or the close. */
export type Request =
  /** `buffers`: the parameters that were Buffers (they arrive as Uint8Arrays). */
  | { id: number; op: 'query'; text: string; params: unknown[] | undefined; buffers: number[] }
  | { id: number; op: 'exec'; text: string }
  | { id: number; op: 'begin' | 'commit' | 'rollback' | 'close' }
  | { id: number; op: 'listen'; channel: string }
  | { id: number; op: 'unlisten'; listener: number };

/** An answer (to the request of the same id), a notification, or the start's outcome (id 0). */
export type Reply =
  | { id: number; rows?: unknown[]; listener?: number }
  | { id: number; error: ErrorFields }
  | { notify: number };

/** An error's own fields (PGlite's database errors: code, detail, constraint, ...) and its message. */
export type ErrorFields = Record<string, string | number | boolean | undefined> & { message: string };

/**
 * PGlite's start parameters, and one more: a new WAL segment is created without writing its
 * 16 MiB of zeros first. Postgres fills a segment with zeros so that later writes never have to
 * allocate, which pays where fsync waits for the disk; PGlite runs with fsync off, and its file
 * writes are synchronous calls on its thread: the zeros were 16 writes of 1 MiB (50 ms to a few
 * hundred on a busy disk) inside whichever statement crossed into the next segment, every 16 MiB
 * of WAL (a few seconds of a large ingest). The segment is created at its full size all the same.
 */
export const PGLITE_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, '-c', 'wal_init_zero=off'];

/** The thread's workerData: where the data is (undefined: in memory), and PGlite's compiled WebAssembly. */
export interface Start {
  dataDir: string | undefined;
  modules: { pglite: WasmModule; initdb: WasmModule };
  /**
   * A store in memory only: where its starting cluster is kept (`path`), and the cluster read
   * there, when there was one (a tarball dumpDataDir made), to load instead of running initdb.
   */
  template?: { path: string; cluster?: Uint8Array };
}

/** A compiled WebAssembly module (this project's libraries declare no WebAssembly types). */
export type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;

/**
 * A thrown value as plain fields: structured clone keeps an Error's message and stack only. The
 * statement's parameters, which PGlite attaches to its errors, stay here (they may be megabytes).
 */
function fieldsOf(e: unknown): ErrorFields {
  if (!(e instanceof Error)) return { message: String(e) };
  const fields: ErrorFields = { message: e.message, name: e.name, stack: e.stack };
  for (const [key, value] of Object.entries(e)) {
    if (key !== 'params' && (value === undefined || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) fields[key] = value;
  }
  return fields;
}

const port = parentPort!;
const start = workerData as Start;
/** The open transaction: its connection, how its function ends (commits or rolls back), and the end. */
let tx: { conn: Transaction; end: (commit: boolean) => void; done: Promise<void> } | undefined;
const listeners = new Map<number, () => Promise<void>>();
let nextListener = 1;
const ROLLED_BACK = new Error('rolled back');

async function run(db: PGlite, req: Request): Promise<{ rows?: unknown[]; listener?: number }> {
  switch (req.op) {
    case 'query': {
      // A Buffer again, as PGlite was given before: a text or json parameter serializes a Buffer as
      // its text, a Uint8Array as its numbers (bytea takes either).
      const params = req.params;
      for (const i of req.buffers) {
        const u = params![i] as Uint8Array;
        params![i] = Buffer.from(u.buffer, u.byteOffset, u.byteLength);
      }
      return { rows: (await (tx?.conn ?? db).query(req.text, params)).rows };
    }
    case 'exec':
      await (tx?.conn ?? db).exec(req.text);
      return {};
    case 'begin': {
      type Open = { conn: Transaction; end: (commit: boolean) => void };
      let opened!: (open: Open) => void;
      const inside = new Promise<Open>((resolve) => (opened = resolve));
      const done = db
        .transaction((conn) => new Promise<void>((resolve, reject) => opened({ conn, end: (commit) => (commit ? resolve() : reject(ROLLED_BACK)) })))
        .then(
          () => {
            tx = undefined;
          },
          (e: unknown) => {
            tx = undefined;
            if (e !== ROLLED_BACK) throw e;
          },
        );
      // BEGIN failed: its error; else the transaction is open.
      const open = await Promise.race([inside, done]);
      if (open) tx = { ...open, done };
      return {};
    }
    case 'commit':
    case 'rollback': {
      const open = tx;
      if (!open) throw new Error('no transaction is open');
      open.end(req.op === 'commit');
      await open.done;
      return {};
    }
    case 'listen': {
      const listener = nextListener++;
      listeners.set(listener, await db.listen(req.channel, () => port.postMessage({ notify: listener } satisfies Reply)));
      return { listener };
    }
    case 'unlisten':
      await listeners.get(req.listener)?.();
      listeners.delete(req.listener);
      return {};
    case 'close':
      await db.close();
      return {};
  }
}

function serve(db: PGlite): void {
  port.on('message', (req: Request) => {
    run(db, req).then(
      (reply) => {
        port.postMessage({ id: req.id, ...reply } satisfies Reply);
        // Closed: so is the port, and the thread ends once its last message is out.
        if (req.op === 'close') port.close();
      },
      (e: unknown) => port.postMessage({ id: req.id, error: fieldsOf(e) } satisfies Reply),
    );
  });
  port.postMessage({ id: 0 } satisfies Reply);
}

// pg_trgm (trigram indexes for substring search, the marketplace skills' `search`) ships with
// PGlite as a contrib extension: loaded here, it is created by the migration that uses it, the
// same statement on both stores.
const options: PGliteOptions = {
  extensions: { pg_trgm },
  startParams: [...PGLITE_START_PARAMS],
  pgliteWasmModule: start.modules.pglite,
  initdbWasmModule: start.modules.initdb,
};

/**
 * initdb is most of what opening a store in memory costs (about 3 of 4 CPU-seconds): a store in
 * memory starts from a pristine cluster an earlier one kept, when there is one.
 */
async function open(): Promise<PGlite> {
  const template = start.template;
  if (template?.cluster) {
    try {
      return await PGlite.create({ ...options, loadDataDir: new Blob([template.cluster]) });
    } catch {
      // Not a cluster this PGlite loads (damaged, or another version's): initdb, and keep its cluster instead.
    }
  }
  const db = await PGlite.create(start.dataDir, options);
  if (template) await keepTemplate(db, template.path);
  return db;
}

/** The cluster initdb made, before any statement, written whole or not at all (renamed into place). */
async function keepTemplate(db: PGlite, path: string): Promise<void> {
  const part = `${path}.${process.pid}-${threadId}.part`;
  try {
    await mkdir(dirname(path), { recursive: true });
    // A folder this process cannot write: not worth dumping the cluster for.
    await access(dirname(path), constants.W_OK);
    const dump = await db.dumpDataDir('gzip');
    await writeFile(part, new Uint8Array(await dump.arrayBuffer()));
    await rename(part, path);
  } catch {
    // Not kept (a folder that cannot be written, a full disk): the next store runs initdb too.
    await rm(part, { force: true });
  }
}

open().then(serve, (e: unknown) => {
  // Not opened: the error is the answer, and the thread ends.
  port.postMessage({ id: 0, error: fieldsOf(e) } satisfies Reply);
  port.close();
});
