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
