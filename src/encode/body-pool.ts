/**
 * Reused memory for uncompressed request bodies. A body lives from its encoding until its gzip and
 * signature are made, a few milliseconds; allocated afresh, each (hundreds of KB for a full batch)
 * was a new mapping (the image's allocator maps every block over 128 KB on its own and unmaps it
 * when freed), every page of which faulted on its first write: a cost per byte of body larger than
 * writing the body, on these machines. A few buffers kept for reuse fault once.
 *
 * Only bodies that nothing else holds come back here (ndjson's: one per drain and attempt); a body
 * shared between drains (encode/shared-encoding.ts) is never recycled.
 */

/** Buffers kept at most, and the largest kept: a few MB resident, whatever the batch sizes. */
const KEPT = 8;
const KEPT_BYTES = 2 * 1024 * 1024;

const free: ArrayBuffer[] = [];
/** Memory this pool handed out: nothing else (Node's shared 8 KB slabs above all) is ever taken back. */
const ours = new WeakSet<ArrayBuffer>();

/** Smaller bodies come from Node's shared slabs or the allocator's reused memory as they are. */
const POOLED_BYTES = 64 * 1024;

/** A buffer of `size` bytes or more (contents undefined), from the pool when one fits. */
export function takeBodyBuffer(size: number): Buffer {
  if (size < POOLED_BYTES) return Buffer.allocUnsafe(size);
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    const n = free[i]!.byteLength;
    if (n >= size && (best < 0 || n < free[best]!.byteLength)) best = i;
  }
  if (best >= 0) {
    const ab = free[best]!;
    free.splice(best, 1);
    // A new view each time: caches keyed by a body object (shared-encoding.ts) never see a reused one.
    return Buffer.from(ab, 0, ab.byteLength);
  }
  const fresh = Buffer.allocUnsafeSlow(size);
  ours.add(fresh.buffer as ArrayBuffer);
  return fresh;
}

/**
 * Gives back the memory under `body` (a view of a buffer from takeBodyBuffer) once nothing reads
 * it any more: its gzip made, its signature computed.
 */
export function recycleBodyBuffer(body: Buffer): void {
  const ab = body.buffer;
  if (!(ab instanceof ArrayBuffer) || !ours.has(ab) || ab.byteLength > KEPT_BYTES || free.includes(ab)) return;
  if (free.length >= KEPT) {
    // Keep the larger: a small one would rarely fit the next body.
    let smallest = 0;
    for (let i = 1; i < free.length; i++) if (free[i]!.byteLength < free[smallest]!.byteLength) smallest = i;
    if (free[smallest]!.byteLength >= ab.byteLength) return;
    free.splice(smallest, 1);
  }
  free.push(ab);
}

/** Buffers held for reuse and their bytes (tests). */
export const bodyPoolSize = (): { buffers: number; bytes: number } => ({ buffers: free.length, bytes: free.reduce((n, ab) => n + ab.byteLength, 0) });
