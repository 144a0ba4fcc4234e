/**
 * Builds a UTF-8 body piece by piece, straight into one buffer. Concatenating
 * thousands of record strings and then encoding the result made V8 flatten a
 * rope of several MB and encode it again (about a tenth of the encoders' time
 * in the worker's profile); here each string is encoded once, where it goes.
 */
export class Utf8Builder {
  private buf: Buffer;
  private pos = 0;

  /** `sizeHint`: the expected size in bytes (the sum of the strings' lengths fits ASCII text exactly). */
  constructor(sizeHint: number) {
    this.buf = Buffer.allocUnsafe(Math.max(256, Math.ceil(sizeHint * 1.05) + 64));
  }

  string(s: string, from = 0): void {
    // A write stops short, without error, where the buffer ends: less than 4 bytes left means it may have.
    for (;;) {
      const start = this.pos;
      const written = this.buf.write(from === 0 ? s : s.slice(from), start);
      if (this.buf.length - (start + written) >= 4) {
        this.pos = start + written;
        return;
      }
      this.grow(this.buf.length + (s.length - from) * 3);
    }
  }

  bytes(b: Buffer): void {
    if (this.pos + b.length > this.buf.length) this.grow(this.pos + b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  /** The bytes written (a view of the builder's buffer). */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private grow(atLeast: number): void {
    const next = Buffer.allocUnsafe(Math.max(atLeast + 64, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
}
