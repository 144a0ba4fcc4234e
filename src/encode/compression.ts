/**
 * gzip of request bodies, with zlib options sized to each body. Small bodies (the batches of a
 * few records that many agents make) are compressed inline with a window and hash table to match;
 * large ones on the thread pool, with an output buffer large enough for the whole result.
 */
import { promisify } from 'node:util';
import { gzip as gzipCb, gzipSync } from 'node:zlib';

const gzipAsync = promisify(gzipCb);

/**
 * Bodies below this are compressed inline: for a small body the async path's stream and
 * thread-pool hand-off cost about five times the compression itself (50-110 µs against 10-15 µs
 * of CPU for 1.7 KB), and batches are small when records come from many agents. Larger bodies go
 * to the thread pool, off the event loop and onto the second core.
 */
const INLINE_GZIP_BYTES = 64 * 1024;
/** A batch body's gzip: small ones inline, large ones on the thread pool, each with zlib options sized to it. */
export const gzipBody = (body: Buffer, o: { level: number }): Promise<Buffer> =>
  body.length < INLINE_GZIP_BYTES ? Promise.resolve(gzipSync(body, smallBodyGzip(body.length, o.level))) : gzipAsync(body, largeBodyGzip(body.length, o.level));

/**
 * zlib options for a body compressed on the thread pool: an output buffer large enough for the
 * whole compressed body (a quarter of the input; NDJSON batches compress to an eighth), so the
 * work takes two trips to the pool (the data, then the end of the stream). zlib's 16 KB default
 * took a trip per 16 KB of output, seven for an 800 KB batch, each a callback on the event loop
 * and a wake-up of a pool thread: 0.1 to 0.2 ms of the main thread and 0.2 to 0.4 ms of CPU in all
 * per batch, measured (about 10% of its gzip).
 */
export function largeBodyGzip(size: number, level: number): { level: number; chunkSize: number } {
  return { level, chunkSize: Math.min(MAX_OUTPUT_CHUNK, Math.max(16 * 1024, Math.ceil(size / 4))) };
}

/**
 * Below the image's allocator threshold for a mapping of its own (MALLOC_MMAP_THRESHOLD_, 128 KB):
 * an output chunk above it was a fresh mapping per batch, its every page faulting on first write;
 * below, it is memory the allocator reuses. A full NDJSON batch (about 800 KB, under 100 KB gzipped:
 * its lines repeat the batch's head) still compresses into one chunk.
 */
const MAX_OUTPUT_CHUNK = 120 * 1024;

/**
 * zlib options for a small body: a window just larger than the body (deflate reaches back at most
 * the window less 262 bytes, so every match of the default window is still in reach) and a hash
 * table to match. zlib's default state is about 260 KB, allocated and its hash table cleared on
 * every call: for the 1-2 KB bodies of many-agent batches that, not the compression, was the cost.
 * The output is ordinary gzip; decoders always allow a 32 KB window.
 */
export function smallBodyGzip(size: number, level: number): { level: number; windowBits: number; memLevel: number; chunkSize: number } {
  const windowBits = Math.min(15, Math.max(10, 32 - Math.clz32(size + 262)));
  return { level, windowBits, memLevel: Math.max(1, Math.min(8, windowBits - 6)), chunkSize: smallBodyOutputChunk(size) };
}

/**
 * The output buffer of a small body's gzip: half the body and a little (the batches of one or
 * two records that many agents make compress to about 0.5 to 0.9 of their size, larger ones to a
 * fifth), not zlib's 16 KB. The gzip is a view of that buffer and lives as long as its request, so
 * every small body held 16 KB outside the JavaScript heap until a full collection: with 10,000
 * agents, tens of MB of the worker's RSS (benchmarks-engine-findings.md, memory). A gzip larger than the buffer
 * (a body that barely compresses) takes a second one and is joined: correct, rarely paid.
 * zlib's own floor is 64 bytes.
 */
export function smallBodyOutputChunk(size: number): number {
  return Math.min(16 * 1024, Math.max(64, (size >> 1) + 256));
}
