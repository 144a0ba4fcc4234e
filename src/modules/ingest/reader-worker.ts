/**
 * The ingest body reader's thread (body-reader.ts): reads each body it is handed a chunk at a time,
 * as the API's thread would (record-body.ts, check-record.ts), and posts back each record's refusal
 * or payload in batches as they are made. Several bodies are read at once, each in the slices of
 * this thread's own event loop, so a body whose next chunk has not arrived holds no other.
 */
import { parentPort } from 'node:worker_threads';
import { AppError } from '../../errors.js';
import { slicer } from '../../event-loop.js';
import { checkItem, type Checked } from './check-record.js';
import { readJsonArrayBody, readNdjsonBody, type BodyChunks, type BodyItem } from './record-body.js';
import type { FromReader, ToReader } from './body-reader.js';

/** Records' checks posted in one message once their text passes this many characters (or records). */
const BATCH_CHARS = 256 * 1024;
const BATCH_RECORDS = 500;

/** A body's chunks as the API's thread posts them. */
class PostedChunks implements BodyChunks {
  private readonly queue: Uint8Array[] = [];
  private ended = false;
  aborted = false;
  private wake: (() => void) | undefined;

  push(bytes: Uint8Array): void {
    this.queue.push(bytes);
    this.settle();
  }

  end(): void {
    this.ended = true;
    this.settle();
  }

  abort(): void {
    this.aborted = true;
    this.queue.length = 0;
    this.settle();
  }

  async next(): Promise<Uint8Array | undefined> {
    for (;;) {
      if (this.aborted) throw new Error('aborted');
      const chunk = this.queue.shift();
      if (chunk) return chunk;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private settle(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

const port = parentPort!;
const post = (m: FromReader) => port.postMessage(m);
const bodies = new Map<number, PostedChunks>();

async function read(open: Extract<ToReader, { t: 'open' }>, chunks: PostedChunks): Promise<void> {
  const { id } = open;
  let batch: (string | Checked)[] = [];
  let batchChars = 0;
  const flush = () => {
    if (batch.length === 0) return;
    post({ t: 'items', id, items: batch });
    batch = [];
    batchChars = 0;
  };
  // The readers keep what this returns for each record: nothing, as the check is posted instead.
  const each = (item: BodyItem): null => {
    const checked = checkItem(item, open.keyOrgId);
    batch.push(checked);
    batchChars += typeof checked === 'string' ? checked.length : checked.payload.length;
    if (batchChars >= BATCH_CHARS || batch.length >= BATCH_RECORDS) flush();
    return null;
  };
  try {
    const body = open.kind === 'ndjson'
      ? await readNdjsonBody(chunks, open.maxItems, slicer(), each)
      : await readJsonArrayBody(chunks, open.maxItems, slicer(), each);
    if (chunks.aborted) return;
    flush();
    post({ t: 'done', id, notArray: !Array.isArray(body) });
  } catch (e) {
    if (chunks.aborted) return;
    post({
      t: 'failed', id,
      error: e instanceof AppError
        ? { statusCode: e.statusCode, code: e.code, message: e.message, details: { ...e.details } }
        : { message: e instanceof Error ? e.message : String(e) },
    });
  } finally {
    bodies.delete(id);
  }
}

port.on('message', (m: ToReader) => {
  if (m.t === 'open') {
    const chunks = new PostedChunks();
    bodies.set(m.id, chunks);
    void read(m, chunks);
  } else if (m.t === 'chunk') bodies.get(m.id)?.push(m.bytes);
  else if (m.t === 'end') bodies.get(m.id)?.end();
  else bodies.get(m.id)?.abort();
});
