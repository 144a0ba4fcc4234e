/**
 * A bytea query parameter given as pieces, and the query that sends it to a Postgres server
 * without joining them. The worker's platform copy is a JSON array of the consumed records as
 * they came (one parameter of several MB a flush). Joined, it cost a fresh multi-MB buffer, and
 * pg's serializer copied it again into another one for the Bind message: two copies of every
 * consumed byte into freshly mapped memory, whose page faults made them about 7% of the worker's
 * main thread. Here the Bind message is written to the socket piece by piece (the socket is
 * corked while a query is written, so the pieces leave in one gathered write): no copy at all.
 * PGlite, which takes parameters in memory, gets them joined.
 */
import pg from 'pg';

export class BytePieces {
  readonly byteLength: number;
  constructor(readonly pieces: readonly Buffer[]) {
    let n = 0;
    for (const p of pieces) n += p.length;
    this.byteLength = n;
  }

  joined(): Buffer {
    return Buffer.concat(this.pieces as Buffer[], this.byteLength);
  }
}

/** A parameter of a piecewise query: text, bytes, or bytes in pieces (SQL null for null). */
export type PiecewiseValue = string | Buffer | BytePieces | null;

export const holdsPieces = (params: readonly unknown[] | undefined): boolean => params?.some((p) => p instanceof BytePieces) ?? false;

/** The parameters with their pieces joined, for a connection that takes parameters in memory. */
export const joinPieces = (params: readonly unknown[] | undefined): unknown[] | undefined =>
  params?.map((p) => (p instanceof BytePieces ? p.joined() : p));

interface Writable {
  writable: boolean;
  write(chunk: Buffer): boolean;
}

/**
 * The Bind message (protocol 3.0: 'B', length, portal, statement, parameter formats, parameters,
 * result formats) for the unnamed portal and statement: text parameters in text format, bytes in
 * binary, results in text. Written as chunks: the pieces of a BytePieces are written as they are.
 */
export function writeBind(stream: Writable, values: readonly PiecewiseValue[]): void {
  const n = values.length;
  const texts = values.map((v) => (typeof v === 'string' ? Buffer.from(v) : undefined));
  let length = 4 + 1 + 1 + 2 + 2 * n + 2 + 2 + 2;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    length += 4 + (v === null ? 0 : v instanceof BytePieces ? v.byteLength : (texts[i] ?? (v as Buffer)).length);
  }
  const head = Buffer.allocUnsafe(1 + 4 + 2 + 2 + 2 * n + 2);
  let at = head.writeUInt8(0x42, 0);
  at = head.writeInt32BE(length, at);
  at = head.writeUInt8(0, at); // portal: unnamed
  at = head.writeUInt8(0, at); // statement: unnamed
  at = head.writeInt16BE(n, at);
  for (const v of values) at = head.writeInt16BE(typeof v === 'string' || v === null ? 0 : 1, at);
  head.writeInt16BE(n, at);
  stream.write(head);
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    const len = Buffer.allocUnsafe(4);
    if (v === null) {
      len.writeInt32BE(-1, 0);
      stream.write(len);
    } else if (v instanceof BytePieces) {
      len.writeInt32BE(v.byteLength, 0);
      stream.write(len);
      for (const p of v.pieces) if (p.length > 0) stream.write(p);
    } else {
      const bytes = texts[i] ?? (v as Buffer);
      len.writeInt32BE(bytes.length, 0);
      stream.write(len);
      if (bytes.length > 0) stream.write(bytes);
    }
  }
  stream.write(RESULTS_IN_TEXT);
}

/** One result format code for all columns: text. */
const RESULTS_IN_TEXT = Buffer.from([0, 1, 0, 0]);

/** pg's connection, as far as a query's `prepare` uses it. */
interface PgConnection {
  stream: Writable;
  parse(q: { text: string; name?: string; types?: unknown[] }): void;
  describe(m: { type: 'P' | 'S'; name: string }): void;
}

interface PgQueryInternals {
  text: string;
  types?: unknown[];
  values: PiecewiseValue[];
  rows?: number;
  _getRows(connection: PgConnection, rows: number | undefined): void;
}

/**
 * pg's own Query (its result handling, errors and callbacks unchanged), with its `prepare` step
 * replaced: pg's writes Parse, Bind (through its serializer), Describe, Execute and Sync; this one
 * writes the Bind itself. `prepare` and `_getRows` are pg 8's internals (pg-cursor builds on the
 * same); the store tests run this query against a real server, so a pg that changed them fails there.
 */
class PiecewiseQuery extends pg.Query {
  prepare(connection: PgConnection): void {
    const self = this as unknown as PgQueryInternals;
    connection.parse({ text: self.text, types: self.types });
    if (connection.stream.writable) writeBind(connection.stream, self.values);
    connection.describe({ type: 'P', name: '' });
    self._getRows(connection, self.rows);
  }
}

/** Runs one statement whose parameters may hold BytePieces on a checked-out pg client. */
export function queryPiecewise<T>(client: pg.ClientBase, text: string, values: readonly unknown[]): Promise<T[]> {
  for (const v of values) {
    if (!(v === null || typeof v === 'string' || Buffer.isBuffer(v) || v instanceof BytePieces)) {
      throw new TypeError('a piecewise query takes text, Buffer, BytePieces or null parameters');
    }
  }
  return new Promise<T[]>((resolve, reject) => {
    const query = new PiecewiseQuery(text, values as unknown[], (err, res) => (err ? reject(err) : resolve(res.rows as T[])));
    void client.query(query);
  });
}

/** CopyDone (protocol 3.0: 'c', length 4). */
const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]);

/** pg's connection, as far as a COPY ... FROM STDIN uses it. */
interface PgCopyConnection {
  stream: Writable & { cork(): void; uncork(): void };
}

/**
 * `COPY ... FROM STDIN` of rows already in the COPY format, as pg's own Query (its result,
 * errors and callbacks unchanged: the command tag's count is the result's rowCount). When the
 * server asks for the data, the rows go as one CopyData message, then CopyDone. Rows that lie side
 * by side in one piece of memory are written as one view, so a
 * flush of thousands of rows is a few writes, not a write a row. `handleCopyInResponse` is pg 8's
 * hook for the data of a COPY (pg-copy-streams builds on the same); the store tests run this
 * against a real server.
 */
// `lines`, not `rows`: pg's Query has a `rows` of its own (rows a portal returns at a time).
class CopyInQuery extends pg.Query {
  constructor(text: string, private readonly lines: readonly Buffer[], callback: (err: Error | undefined, res: pg.QueryResult) => void) {
    super(text, undefined, callback);
  }

  handleCopyInResponse(connection: PgCopyConnection): void {
    const stream = connection.stream;
    let length = 4;
    for (const r of this.lines) length += r.length;
    const head = Buffer.allocUnsafe(5);
    head.writeUInt8(0x64, 0);
    head.writeInt32BE(length, 1);
    // Corked: the pieces leave in gathered writes.
    stream.cork();
    stream.write(head);
    for (const run of adjacentRuns(this.lines)) stream.write(run);
    stream.write(COPY_DONE);
    stream.uncork();
  }
}

/** The buffers as views, each joining neighbours that lie side by side in the same memory (no bytes copied). */
export function* adjacentRuns(buffers: readonly Buffer[]): Generator<Buffer> {
  let first: Buffer | undefined;
  let end = 0;
  // The run's first buffer itself when nothing joined it.
  const view = (b: Buffer): Buffer => (end === b.byteOffset + b.length ? b : Buffer.from(b.buffer, b.byteOffset, end - b.byteOffset));
  for (const b of buffers) {
    if (b.length === 0) continue;
    if (first !== undefined && b.buffer === first.buffer && b.byteOffset === end) {
      end += b.length;
      continue;
    }
    if (first !== undefined) yield view(first);
    first = b;
    end = b.byteOffset + b.length;
  }
  if (first !== undefined) yield view(first);
}

/** Runs `COPY ... FROM STDIN` (`text`) with `rows` on a checked-out pg client; resolves to the rows copied. */
export function copyInPiecewise(client: pg.ClientBase, text: string, rows: readonly Buffer[]): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const query = new CopyInQuery(text, rows, (err, res) => (err ? reject(err) : resolve(res.rowCount ?? 0)));
    void client.query(query);
  });
}
