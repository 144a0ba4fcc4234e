/**
 * `COPY ... FROM STDIN` of rows already in COPY's format (text or binary), written to the
 * Postgres socket as they are: no row is copied or joined on the way. The platform copy's pages
 * are written with it (src/modules/logs/repository.ts). PGlite has no COPY here: its callers write
 * with statements.
 */
import pg from 'pg';

interface Writable {
  write(chunk: Buffer): boolean;
}

/** CopyDone (protocol 3.0: 'c', length 4). */
const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]);

/**
 * The most data a CopyData message carries. The server reads a whole message into one buffer
 * before its COPY takes any of it (a flush's pages as one message: a buffer of 1 to 2 MB made,
 * faulted in and given back each COPY); messages need not end where rows end, and 64 KiB is
 * what the server itself reads from its input at a time.
 */
export const COPY_MESSAGE_BYTES = 64 * 1024;

/** pg's connection, as far as a COPY ... FROM STDIN uses it. */
interface PgCopyConnection {
  stream: Writable & { cork(): void; uncork(): void };
}

/**
 * `COPY ... FROM STDIN` of rows already in the COPY format, as pg's own Query (its result,
 * errors and callbacks unchanged: the command tag's count is the result's rowCount). When the
 * server asks for the data, the rows go as CopyData messages of at most COPY_MESSAGE_BYTES, then
 * CopyDone. Rows that lie side by side in one piece of memory are written as one view.
 * `handleCopyInResponse` is pg 8's hook for the data of a COPY (pg-copy-streams builds on the
 * same); the store tests run this against a real server.
 */
// `lines`, not `rows`: pg's Query has a `rows` of its own (rows a portal returns at a time).
class CopyInQuery extends pg.Query {
  constructor(text: string, private readonly lines: readonly Buffer[], callback: (err: Error | undefined, res: pg.QueryResult) => void) {
    super(text, undefined, callback);
  }

  handleCopyInResponse(connection: PgCopyConnection): void {
    const stream = connection.stream;
    let total = 0;
    for (const r of this.lines) total += r.length;
    const messages = Math.ceil(total / COPY_MESSAGE_BYTES);
    const heads = Buffer.allocUnsafe(5 * messages);
    let head = 0;
    // Bytes the message being written still takes.
    let left = 0;
    let sent = 0;
    // Corked: the pieces leave in gathered writes.
    stream.cork();
    for (const run of adjacentRuns(this.lines)) {
      for (let at = 0; at < run.length; ) {
        if (left === 0) {
          left = Math.min(COPY_MESSAGE_BYTES, total - sent);
          heads.writeUInt8(0x64, head);
          heads.writeInt32BE(left + 4, head + 1);
          stream.write(heads.subarray(head, head + 5));
          head += 5;
        }
        const take = Math.min(left, run.length - at);
        stream.write(at === 0 && take === run.length ? run : run.subarray(at, at + take));
        at += take;
        left -= take;
        sent += take;
      }
    }
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
export function copyInRows(client: pg.ClientBase, text: string, rows: readonly Buffer[]): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const query = new CopyInQuery(text, rows, (err, res) => (err ? reject(err) : resolve(res.rowCount ?? 0)));
    void client.query(query);
  });
}
