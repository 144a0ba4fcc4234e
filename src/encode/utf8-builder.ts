/**
 * Builds a UTF-8 body piece by piece, straight into one buffer. Concatenating
 * thousands of record strings and then encoding the result made V8 flatten a
 * rope of several MB and encode it again (about a tenth of the encoders' time
 * in the worker's profile); here each string is encoded once, where it goes.
 */
import { recycleBodyBuffer, takeBodyBuffer } from './body-pool.js';

export class Utf8Builder {
  private buf: Buffer;
  private pos = 0;

  /**
   * `sizeHint`: the expected size in bytes (the sum of the strings' lengths fits ASCII text exactly).
   * `pooled`: the memory comes from the body pool (body-pool.ts), for a body its user gives back.
   */
  constructor(sizeHint: number, private readonly pooled = false) {
    this.buf = this.alloc(Math.max(256, Math.ceil(sizeHint * 1.05) + 64));
  }

  private alloc(size: number): Buffer {
    return this.pooled ? takeBodyBuffer(size) : Buffer.allocUnsafe(size);
  }

  string(s: string): void {
    // A write stops short, without error, where the buffer ends: less than 4 bytes left means it may have.
    for (;;) {
      const start = this.pos;
      const written = this.buf.write(s, start);
      if (this.buf.length - (start + written) >= 4) {
        this.pos = start + written;
        return;
      }
      this.grow(this.buf.length + s.length * 3);
    }
  }

  /**
   * `s` with its first byte replaced by `first` (its first character must be ASCII): splices a JSON
   * object's members after other text (`{"a":1}` -> `,"a":1}`) without slicing the string.
   */
  stringWithFirstByte(s: string, first: number): void {
    const start = this.pos;
    this.string(s);
    this.buf[start] = first;
  }

  /** `b` with its first byte replaced by `first` (as stringWithFirstByte, for text already UTF-8). */
  bytesWithFirstByte(b: Buffer, first: number): void {
    const start = this.pos;
    this.bytes(b);
    this.buf[start] = first;
  }

  bytes(b: Buffer): void {
    if (this.pos + b.length > this.buf.length) this.grow(this.pos + b.length);
    // TypedArray#set: Buffer#copy's argument handling cost more than copying a few hundred bytes.
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /**
   * Bytes `start` to `end` of `source` (an entry's span of its slab: encoder.ts SerialisedEntry),
   * copied without making a view of them; the first replaced by `first` when given (as bytesWithFirstByte).
   */
  span(source: Buffer, start: number, end: number, first?: number): void {
    const n = end - start;
    if (this.pos + n > this.buf.length) this.grow(this.pos + n);
    const at = this.pos;
    this.pos += source.copy(this.buf, at, start, end);
    if (first !== undefined) this.buf[at] = first;
  }

  byte(b: number): void {
    if (this.pos >= this.buf.length) this.grow(this.pos + 1);
    this.buf[this.pos++] = b;
  }

  /** The bytes written (a view of the builder's buffer). */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private grow(atLeast: number): void {
    const next = this.alloc(Math.max(atLeast + 64, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    if (this.pooled) recycleBodyBuffer(this.buf);
    this.buf = next;
  }
}
