/**
 * Reads an ingest body into its records' checks (check-record.ts), off the API's thread when the
 * body is large. Splitting, parsing, validating and serialising 15 MB of records is the API
 * thread's largest work under ingest load, and the parsed values its collector's: done in slices on
 * that thread, a slice's 10 ms beside a full collection made turns of 20 ms and more. A body over
 * INLINE_BODY_BYTES (or of unknown length) is handed to a reader thread a chunk at a time as it
 * arrives; the thread sends back each record's refusal or payload in batches, and nothing of a
 * parsed record ever lives on the API's heap. A small body is read where it arrives: its work is
 * shorter than the round trip.
 *
 * Either way the answer is the same (test/integration/ingest/body-reader.test.ts): the records'
 * checks in their order, or the refusal of the body whole as an AppError with its code.
 */
import type { Worker } from 'node:worker_threads';
import { AppError } from '../../errors.js';
import { slicer } from '../../event-loop.js';
import { startModuleWorker } from '../../threads.js';
import { checkItem, type Checked } from './check-record.js';
import { readJsonArrayBody, readNdjsonBody, type BodyChunks } from './record-body.js';

export type BodyKind = 'json' | 'ndjson';
/** Each record's refusal or what the sink is given for it, in the body's order; or a JSON body that is not an array. */
export type ReadBody = (string | Checked)[] | { notArray: true };

/** Bodies up to this size are read on the API's thread, in its slices. */
export const INLINE_BODY_BYTES = 64 * 1024;

/** What the API's thread posts to the reader thread. */
export type ToReader =
  | { t: 'open'; id: number; kind: BodyKind; keyOrgId: string | undefined; maxItems: number }
  | { t: 'chunk'; id: number; bytes: Uint8Array }
  | { t: 'end'; id: number }
  | { t: 'abort'; id: number };

/** What the reader thread posts back: records' checks as they are made, then the end. */
export type FromReader =
  | { t: 'items'; id: number; items: (string | Checked)[] }
  | { t: 'done'; id: number; notArray: boolean }
  | { t: 'failed'; id: number; error: { statusCode?: number; code?: string; message: string; details?: Record<string, unknown> } };

export interface BodyReader {
  /** The body's records, checked against the credential's organization (`keyOrgId`). */
  read(kind: BodyKind, chunks: BodyChunks, keyOrgId: string | undefined, maxItems: number, contentLength: number | undefined): Promise<ReadBody>;
  /** Ends the reader thread, if one was started. */
  close(): Promise<void>;
}

/** A body read on this thread, in the event loop's slices. */
export async function readInline(kind: BodyKind, chunks: BodyChunks, keyOrgId: string | undefined, maxItems: number): Promise<ReadBody> {
  const check = (item: Parameters<typeof checkItem>[0]) => checkItem(item, keyOrgId);
  if (kind === 'ndjson') return readNdjsonBody(chunks, maxItems, slicer(), check);
  const read = await readJsonArrayBody(chunks, maxItems, slicer(), check);
  return Array.isArray(read) ? read : { notArray: true };
}

interface Session {
  items: (string | Checked)[];
  resolve(body: ReadBody): void;
  reject(e: Error): void;
}

const EARLY: unique symbol = Symbol('early');

export interface BodyReaderOptions {
  /** Bodies of at most this many bytes (by Content-Length) are read on the API's thread. */
  inlineMaxBytes?: number;
}

export function createBodyReader(opts: BodyReaderOptions = {}): BodyReader {
  const inlineMaxBytes = opts.inlineMaxBytes ?? INLINE_BODY_BYTES;
  const sessions = new Map<number, Session>();
  let worker: Worker | undefined;
  let nextId = 0;

  // A thread that fails (or exits) fails the bodies it was reading, which are refused as internal
  // errors before anything of them is written; the next large body starts a new thread.
  const failAll = (e: Error) => {
    for (const s of sessions.values()) s.reject(e);
    sessions.clear();
  };
  const thread = (): Worker => {
    if (worker) return worker;
    const w = startModuleWorker(new URL('./reader-worker', import.meta.url));
    // Requests hold the process open while a body is read; an idle reader thread does not.
    w.unref();
    w.on('message', (m: FromReader) => {
      const s = sessions.get(m.id);
      if (!s) return;
      if (m.t === 'items') {
        for (const item of m.items) s.items.push(item);
        return;
      }
      sessions.delete(m.id);
      if (m.t === 'done') s.resolve(m.notArray ? { notArray: true } : s.items);
      else s.reject(m.error.code && m.error.statusCode
        ? new AppError(m.error.statusCode, m.error.code, m.error.message, m.error.details)
        : new Error(`ingest body reader: ${m.error.message}`));
    });
    w.on('error', (e) => failAll(new Error(`ingest body reader thread failed: ${e.message}`)));
    w.on('exit', (code) => {
      if (worker === w) worker = undefined;
      failAll(new Error(`ingest body reader thread exited (${code})`));
    });
    return (worker = w);
  };

  return {
    async read(kind, chunks, keyOrgId, maxItems, contentLength) {
      if (contentLength !== undefined && contentLength <= inlineMaxBytes) return readInline(kind, chunks, keyOrgId, maxItems);
      const w = thread();
      const id = ++nextId;
      const result = new Promise<ReadBody>((resolve, reject) => sessions.set(id, { items: [], resolve, reject }));
      // Settles before the body's end only when the body is refused (or the thread failed): the
      // rest of the body is then not read, as on this thread.
      const early: Promise<typeof EARLY> = result.then(() => EARLY, () => EARLY);
      const post = (m: ToReader) => w.postMessage(m);
      post({ t: 'open', id, kind, keyOrgId, maxItems });
      try {
        for (;;) {
          const next = chunks.next();
          const chunk = await Promise.race([next, early]);
          if (chunk === EARLY) {
            next.catch(() => {});
            break;
          }
          if (chunk === undefined) {
            post({ t: 'end', id });
            break;
          }
          // Cloned into the message, not copied here first: no buffer of it is left on this thread.
          // A clone takes a view's whole buffer: a chunk viewing a much larger one is copied out.
          post({ t: 'chunk', id, bytes: chunk.byteLength * 2 < chunk.buffer.byteLength ? new Uint8Array(chunk) : chunk });
        }
      } catch (e) {
        // The body itself failed (too large, cut short, the client gone): its reading stops there.
        if (sessions.delete(id)) post({ t: 'abort', id });
        throw e;
      }
      return result;
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
