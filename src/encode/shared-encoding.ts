/**
 * Encoding shared between drains. When several drains receive the same
 * records (the pipeline hands them the very same entry objects, see
 * pipeline/shape-groups.ts), encodings whose bytes depend only on the
 * records and the resource (otlp, vendor-a, vendor-b: no batch id inside)
 * produce identical bodies; this encodes such a body once, and its gzip is
 * made once too. json and ndjson carry the batch id in the body, so each
 * drain encodes those itself (from the shared per-record JSON).
 *
 * json carries the batch id once, before the records: its body is spliced
 * from a per-drain head, the shared records text and a tail, and its gzip
 * from the compressed head, the shared records compressed once, and the
 * tail (deflate blocks concatenate; see gzipSpliced).
 *
 * A cached body is reused only for a batch holding the same entry objects
 * in the same order under the same resource: equal by identity, checked
 * entry by entry. Caches are weak: they go with the entries and bodies.
 */
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import type { BatchEntry, EncodableBatch, Encoder } from './encoder.js';
import { largeBodyGzip } from './compression.js';

const deflateRaw = promisify(zlib.deflateRaw);

interface Encoded<T> {
  entries: readonly BatchEntry[];
  resourceJson: string;
  value: T;
}

function sameContents(a: readonly BatchEntry[], b: readonly BatchEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A value made once per batch contents (same entry objects, same order,
 * same resource). Keyed by the batch's first entry, with a few candidates
 * per key (batches cut differently).
 */
export function perContents<T>(make: (batch: EncodableBatch) => T): (batch: EncodableBatch) => T {
  const cache = new WeakMap<BatchEntry, Encoded<T>[]>();
  return (batch) => {
    const first = batch.entries[0];
    if (first === undefined) return make(batch);
    const known = cache.get(first);
    const hit = known?.find((k) => k.resourceJson === batch.resourceJson && sameContents(k.entries, batch.entries));
    if (hit) return hit.value;
    const value = make(batch);
    const entry = { entries: batch.entries, resourceJson: batch.resourceJson, value };
    if (known) {
      if (known.length >= 4) known.shift();
      known.push(entry);
    } else cache.set(first, [entry]);
    return value;
  };
}

/** Wraps an encoder whose output does not depend on the batch id. */
export function sharedEncoding(encoder: Encoder): Encoder {
  const encodeOnce = perContents((batch) => encoder.encode(batch));
  const shared: Encoder = {
    contentType: encoder.contentType,
    usesRecordJson: encoder.usesRecordJson,
    encode: encodeOnce,
  };
  if (encoder.rejectedRecords) shared.rejectedRecords = encoder.rejectedRecords.bind(encoder);
  return shared;
}

/** A part of several bodies, compressed once per level. */
export interface SharedPart {
  bytes: Buffer;
  deflated: Map<number, Promise<Buffer>>;
}

export const sharedPart = (content: string | Buffer): SharedPart => ({ bytes: typeof content === 'string' ? Buffer.from(content, 'utf8') : content, deflated: new Map() });

interface Splice {
  head: Buffer;
  middle: SharedPart;
  tail: Buffer;
}

const splices = new WeakMap<Buffer, Splice>();

/** head + middle + tail as one body, remembered as spliced so that its gzip can reuse the middle's. */
export function splicedBody(head: string, middle: SharedPart, tail: string): Buffer {
  const splice = { head: Buffer.from(head, 'utf8'), middle, tail: Buffer.from(tail, 'utf8') };
  const body = Buffer.concat([splice.head, middle.bytes, splice.tail]);
  splices.set(body, splice);
  return body;
}

// gzip member header: magic, deflate, no flags, no mtime, no extra flags, OS unknown (RFC 1952).
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/**
 * gzip of a spliced body: the head and the middle each compressed on their
 * own and ended with a sync flush (byte-aligned, not final), then the tail as
 * the final blocks. Each part refers back only within itself, so the blocks
 * concatenate into one valid deflate stream; the trailer carries the CRC-32
 * and length of the whole body. The middle's compression is shared by every
 * body spliced around it.
 */
async function gzipSpliced(body: Buffer, s: Splice, level: number): Promise<Buffer> {
  let middle = s.middle.deflated.get(level);
  if (middle === undefined) {
    // Sized like a large body's gzip (compression.ts): a trip to the thread pool per 16 KB of output otherwise.
    middle = deflateRaw(s.middle.bytes, { level, finishFlush: zlib.constants.Z_SYNC_FLUSH, chunkSize: largeBodyGzip(s.middle.bytes.length, level).chunkSize });
    s.middle.deflated.set(level, middle);
  }
  const head = zlib.deflateRawSync(s.head, { level, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const tail = zlib.deflateRawSync(s.tail, { level });
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(zlib.crc32(body) >>> 0, 0);
  trailer.writeUInt32LE(body.length >>> 0, 4);
  return Buffer.concat([GZIP_HEADER, head, await middle, tail, trailer]);
}

const compressed = new WeakMap<Buffer, { level: number; gz: Promise<Buffer> }>();

/**
 * gzip of a body, computed once per body object and level: drains sharing a
 * body (above) share its compression, and spliced bodies share the
 * compression of their middle. Other bodies are compressed whole.
 */
export function gzipOnce(body: Buffer, level: number, gzip: (b: Buffer, o: { level: number }) => Promise<Buffer>): Promise<Buffer> {
  const known = compressed.get(body);
  if (known && known.level === level) return known.gz;
  const splice = splices.get(body);
  // zlib.crc32 arrived in Node 20.15; without it, compress whole.
  const gz = splice && typeof zlib.crc32 === 'function' ? gzipSpliced(body, splice, level) : gzip(body, { level });
  compressed.set(body, { level, gz });
  gz.catch(() => compressed.delete(body));
  return gz;
}
