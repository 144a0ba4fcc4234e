/**
 * A string's JSON text written as UTF-8 straight into a buffer, the bytes `JSON.stringify(s)`
 * encodes to, without making that string: a string of printable ASCII without `"` or `\` (nearly
 * every id, name and message) is its own text between quotes, copied byte for byte; any other is
 * written as JSON.stringify writes it. For the record JSON a batch holds (encode/record-json.ts)
 * and the platform copy's page summaries (modules/logs/pages.ts), written record by record.
 */

/** Printable ASCII but `"` and `\`: a string of these is its own JSON text between quotes, a byte a character. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** From this length a string is checked by PLAIN and copied natively; shorter ones by the loop (a native call costs about as much as copying this many characters). */
const NATIVE_FROM = 48;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The most bytes `s`'s JSON text takes: six a UTF-16 unit (`\u001f`, or half a surrogate pair escaped), and its quotes. */
export const jsonStringMostBytes = (s: string): number => s.length * 6 + 2;

/**
 * Writes `JSON.stringify(s)` as UTF-8 into `into` from `at`, which must have jsonStringMostBytes(s)
 * bytes of room; answers where it ended.
 */
export function writeJsonString(s: string, into: Buffer, at: number): number {
  const n = s.length;
  if (n >= NATIVE_FROM) {
    if (!PLAIN.test(s)) return at + into.write(JSON.stringify(s), at, 'utf8');
    into[at] = QUOTE;
    const end = at + 1 + into.write(s, at + 1, 'latin1');
    into[end] = QUOTE;
    return end + 1;
  }
  let q = at;
  into[q++] = QUOTE;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    // Outside PLAIN: a control character, '"', '\', DEL or anything past ASCII.
    if (c < 0x20 || c === QUOTE || c === BACKSLASH || c > 0x7e) return at + into.write(JSON.stringify(s), at, 'utf8');
    into[q++] = c;
  }
  into[q++] = QUOTE;
  return q;
}

/** Text known to be ASCII needing no escape (a writer's own keys, a number's or boolean's JSON), byte for byte; answers where it ended. */
export function writeAscii(s: string, into: Buffer, at: number): number {
  const n = s.length;
  for (let i = 0; i < n; i++) into[at++] = s.charCodeAt(i);
  return at;
}

/** JSON.stringify's text of a number: its shortest form, `null` where JSON has none (NaN, the infinities). */
export const jsonNumber = (v: number): string => (Number.isFinite(v) ? String(v) : 'null');

const NEWLINE = 0x0a;
const SPACE = 0x20;

/**
 * JSON text's bytes `start` to `end` of `out` put on one line: a raw newline in JSON text is
 * whitespace between tokens, so made a space the text keeps its value. `also`: another control byte
 * made a space the same way (one a caller joins texts by, which valid JSON never holds raw).
 */
export function onOneLine(out: Buffer, start: number, end: number, also = NEWLINE): void {
  for (let i = start; i < end; i++) if (out[i] === NEWLINE || out[i] === also) out[i] = SPACE;
}
