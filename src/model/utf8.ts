/**
 * Where bytes stop being UTF-8. Node's decoders replace an invalid sequence
 * with U+FFFD and go on, so text that arrived broken would be stored altered
 * (a name, a record, a seeded key no longer what was sent). Input is checked
 * with this instead, and refused naming the byte.
 */
import { isUtf8 } from 'node:buffer';

/**
 * The offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or -1 when every byte does. Valid input,
 * the common case, is checked natively in one pass.
 */
export function invalidUtf8At(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min = 0x80, max = 0xbf; // the range of the second byte
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) min = 0xa0; // overlong
      if (b === 0xed) max = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) min = 0x90; // overlong
      if (b === 0xf4) max = 0x8f; // past U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined) return i;
      if (k === 1 ? c < min || c > max : c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** How many bytes a sequence led by `b` holds (0: `b` leads none). */
const sequenceLength = (b: number): number => (b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0);

/** A text decoded so far, or where the bytes stopped being UTF-8 (an offset from the first byte written). */
export type Utf8Piece = { text: string } | { badAt: number };

/**
 * UTF-8 text decoded a chunk at a time, so that a large body is checked and decoded in pieces that
 * each cost little, never in one call over the whole. A character split between two chunks is
 * decoded when its last byte arrives. Bytes that are not UTF-8 stop it, naming the offset of the
 * first bad byte as invalidUtf8At would on the bytes whole; a byte order mark is kept as text.
 */
export class Utf8Stream {
  private decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** Bytes written but not decoded yet: the start of a character whose last byte has not come (at most 3). */
  private tail: Uint8Array = new Uint8Array(0);
  /** Bytes written before `tail`. */
  private decoded = 0;

  /** The text of `bytes`, less a character they end in the middle of (it comes with the next write). */
  write(bytes: Uint8Array): Utf8Piece {
    let text: string;
    try {
      text = this.decoder.decode(bytes, { stream: true });
    } catch {
      return this.failed(bytes);
    }
    this.keepTail(bytes);
    return { text };
  }

  /** The end of the bytes: a character left unfinished is not UTF-8. Ready for new bytes afterwards. */
  end(): Utf8Piece {
    if (this.tail.length > 0) {
      const badAt = this.decoded;
      this.reset();
      return { badAt };
    }
    const text = this.decoder.decode();
    this.reset();
    return { text };
  }

  /** Forgets the bytes written: the next write starts a text of its own, offsets from 0. */
  reset(): void {
    this.decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    this.tail = new Uint8Array(0);
    this.decoded = 0;
  }

  private failed(bytes: Uint8Array): Utf8Piece {
    // Everything before the tail was UTF-8, so a check from the tail's start is in step with the characters.
    const joined = new Uint8Array(this.tail.length + bytes.length);
    joined.set(this.tail, 0);
    joined.set(bytes, this.tail.length);
    const at = invalidUtf8At(joined);
    const badAt = this.decoded + (at < 0 ? joined.length : at);
    this.reset();
    return { badAt };
  }

  /** After a successful write: the bytes of an unfinished last character become the tail. */
  private keepTail(bytes: Uint8Array): void {
    const total = this.tail.length + bytes.length;
    let last: Uint8Array;
    if (bytes.length >= 4) last = bytes.subarray(bytes.length - 4);
    else {
      last = new Uint8Array(this.tail.length + bytes.length);
      last.set(this.tail, 0);
      last.set(bytes, this.tail.length);
      last = last.subarray(Math.max(0, last.length - 4));
    }
    let keep = 0;
    // The last byte that leads a sequence, within the last three: unfinished when fewer bytes follow it than it needs.
    for (let j = last.length - 1; j >= Math.max(0, last.length - 3); j--) {
      const b = last[j]!;
      if (b >= 0x80 && b <= 0xbf) continue;
      if (last.length - j < sequenceLength(b)) keep = last.length - j;
      break;
    }
    this.tail = keep === 0 ? new Uint8Array(0) : last.slice(last.length - keep);
    this.decoded += total - this.tail.length;
  }
}
