/**
 * A minimal protobuf wire-format writer over one growing Buffer, for the
 * OTLP encoder's hot path. protobufjs's Writer queues one operation object
 * per field and allocates a state per nested message, which made the OTLP
 * encoder twice as slow as otlp-transformer's own writer; this one writes
 * bytes in place. A nested message reserves room for its length, writes its
 * fields, then writes the length, moving the contents only when the guess
 * was wrong (lengths stay canonical: minimal varints).
 */

const varintSize = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

/** Values of hex digits by character code; -1 for anything else. */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[65 + i] = HEX[97 + i] = 10 + i;

/** Strings this short are written by a loop over their characters, cheaper than a call into native code. */
const SHORT_STRING = 32;

export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(initialSize: number) {
    this.buf = Buffer.allocUnsafe(Math.max(64, initialSize));
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Tags below 128 (field numbers below 16): one byte. */
  tag(t: number): void {
    this.ensure(1);
    this.buf[this.pos++] = t;
  }

  /** An unsigned 32-bit varint. */
  uint32(v: number): void {
    this.ensure(5);
    const b = this.buf;
    let p = this.pos;
    while (v > 0x7f) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p++] = v;
    this.pos = p;
  }

  /** A signed 64-bit varint from an integer number (two's complement for negatives, ten bytes). */
  int64(v: number): void {
    if (v >= 0 && v <= 0xffffffff) {
      this.uint32(v);
      return;
    }
    let lo: number;
    let hi: number;
    const abs = Math.abs(v);
    lo = abs >>> 0;
    hi = Math.floor(abs / 0x100000000) >>> 0;
    if (v < 0) {
      lo = ~lo >>> 0;
      hi = ~hi >>> 0;
      lo = (lo + 1) >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
    }
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (hi > 0 || lo > 0x7f) {
      b[p++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    b[p++] = lo;
    this.pos = p;
  }

  fixed64(lo: number, hi: number): void {
    this.ensure(8);
    this.buf.writeUInt32LE(lo >>> 0, this.pos);
    this.buf.writeUInt32LE(hi >>> 0, this.pos + 4);
    this.pos += 8;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A length-delimited UTF-8 string. */
  string(s: string): void {
    const n = s.length;
    if (n <= SHORT_STRING) {
      // Up to 3 bytes a UTF-16 unit: 96 bytes at most, so a one-byte length.
      this.ensure(1 + 3 * n);
      const b = this.buf;
      const start = this.pos + 1;
      let p = start;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          p = start + b.write(s, start, 'utf8');
          break;
        }
        b[p++] = c;
      }
      b[this.pos] = p - start;
      this.pos = p;
      return;
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    this.uint32(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /**
   * Length-delimited bytes given as lowercase or uppercase hex (trace and
   * span ids: 16 and 8 bytes), decoded here: a call into Buffer#write per id
   * cost more than the loop.
   */
  hexBytes(hex: string): void {
    const n = hex.length >>> 1;
    this.uint32(n);
    this.ensure(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < 2 * n; i += 2) {
      const hi = HEX[hex.charCodeAt(i)] ?? -1;
      const lo = HEX[hex.charCodeAt(i + 1)] ?? -1;
      if (hi < 0 || lo < 0) {
        // Not hex (validation refuses such ids): written as Buffer.from would, up to the first bad pair.
        const bytes = Buffer.from(hex, 'hex');
        this.pos -= varintSize(n);
        this.uint32(bytes.length);
        this.ensure(bytes.length);
        this.pos += bytes.copy(this.buf, this.pos);
        return;
      }
      b[p++] = (hi << 4) | lo;
    }
    this.pos = p;
  }

  /** Starts a nested message; `reserve` bytes are set aside for its length. Returns the mark for `end`. */
  begin(reserve: number): number {
    this.ensure(reserve);
    const mark = this.pos;
    this.pos += reserve;
    return mark * 8 + reserve;
  }

  end(mark: number): void {
    const reserve = mark & 7;
    const at = (mark - reserve) / 8;
    const contentStart = at + reserve;
    const len = this.pos - contentStart;
    const size = varintSize(len);
    if (size !== reserve) {
      this.ensure(size - reserve);
      this.buf.copyWithin(at + size, contentStart, this.pos);
      this.pos += size - reserve;
    }
    const b = this.buf;
    let p = at;
    let v = len;
    while (v > 0x7f) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p] = v;
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
