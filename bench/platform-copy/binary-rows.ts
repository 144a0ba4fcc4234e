/**
 * The platform copy's rows in COPY's binary format, for `bench:platform-copy`'s `binary` variants
 * only (the worker writes the text format: logs/repository.ts copyRow, and docs/benchmarks.md says
 * why). The same values as copyRow: the time to the millisecond, absent fields null, the
 * attributes as JSON (jsonb's binary input: version byte 1, then the JSON text).
 *
 * The format: a header (the signature `PGCOPY\n\377\r\n\0`, int32 flags, int32 header extension
 * length), each tuple an int16 field count then each field as an int32 length (-1 for null) and
 * its bytes, and an int16 -1 after the last tuple; integers big-endian. timestamptz is an int64 of
 * microseconds since 2000-01-01 UTC; text is its UTF-8.
 *
 * A row is built as a string of byte values (every character below 256), so a piece of rows is
 * encoded with one latin1 copy, as copyRow's text rows are with one UTF-8 encoding: a field that
 * is not ASCII goes in as its UTF-8 bytes, one character a byte.
 */
import { isAscii } from 'node:buffer';
import type { AgentRecord } from '../../src/model/record.js';
import { packRows } from '../../src/modules/logs/repository.js';

/** copyRow's columns, in its order. */
const COLUMNS = 'ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity, execution_id, message, trace_id, span_id, attributes';
export const BINARY_COPY_SQL = `copy agent_logs (${COLUMNS}) from stdin (format binary)`;
export const BINARY_HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
export const BINARY_TRAILER = Buffer.from([0xff, 0xff]);

const int32Chars = (n: number): string => String.fromCharCode(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
const SHORT_LENGTHS = Array.from({ length: 4096 }, (_, n) => int32Chars(n));
const lengthChars = (n: number): string => (n < 4096 ? SHORT_LENGTHS[n]! : int32Chars(n));
const NULL_FIELD = '\xff\xff\xff\xff';
const NON_ASCII = /[^\x00-\x7f]/;
const utf8Chars = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
const asciiField = (s: string | undefined): string => (s === undefined ? NULL_FIELD : lengthChars(s.length) + s);
const anyField = (s: string | undefined): string => {
  if (s === undefined) return NULL_FIELD;
  const b = NON_ASCII.test(s) ? utf8Chars(s) : s;
  return lengthChars(b.length) + b;
};
const MS_2000 = Date.UTC(2000, 0, 1);
/** The field count (15) and the timestamp's length (8). */
const ROW_HEAD = '\x00\x0f\x00\x00\x00\x08';

/** The int64 of microseconds since 2000-01-01 UTC, as 8 byte characters (two's complement before 2000). */
function timeChars(timeMs: number): string {
  const us = (timeMs - MS_2000) * 1000;
  if (Math.abs(us) <= Number.MAX_SAFE_INTEGER) {
    const hi = Math.floor(us / 4294967296);
    const lo = us - hi * 4294967296;
    return String.fromCharCode((hi >>> 24) & 255, (hi >>> 16) & 255, (hi >>> 8) & 255, hi & 255, lo >>> 24, (lo >>> 16) & 255, (lo >>> 8) & 255, lo & 255);
  }
  const v = BigInt.asUintN(64, BigInt(timeMs - MS_2000) * 1000n);
  let out = '';
  for (let shift = 56n; shift >= 0n; shift -= 8n) out += String.fromCharCode(Number((v >> shift) & 255n));
  return out;
}

/**
 * `ascii`: every string of the record is ASCII (its JSON was ASCII and held no escape), so no
 * field is searched. Undefined for a record whose attributes JSON.parse made infinite, as copyRow.
 */
export function binaryRow(r: AgentRecord, timeMs: number, ascii = false): string | undefined {
  const f = ascii ? asciiField : anyField;
  let attributes = NULL_FIELD;
  if (r.attributes !== undefined) {
    for (const k in r.attributes) {
      const v = r.attributes[k];
      if (typeof v === 'number' && !Number.isFinite(v)) return undefined;
    }
    const json = JSON.stringify(r.attributes);
    const b = ascii || !NON_ASCII.test(json) ? json : utf8Chars(json);
    attributes = lengthChars(b.length + 1) + '\x01' + b;
  }
  // environment, source, event, severity, traceId and spanId passed ASCII patterns (validateRecord).
  return [
    ROW_HEAD, timeChars(timeMs), f(r.id), f(r.orgId), f(r.agentId), f(r.agentName), f(r.agentVersion),
    asciiField(r.environment), asciiField(r.source), asciiField(r.event), asciiField(r.severity), f(r.executionId),
    f(r.message), asciiField(r.traceId), asciiField(r.spanId), attributes,
  ].join('');
}

/** Whether a record's strings are all ASCII: its JSON is ASCII and `plain` (no backslash, so no \u escape). */
export const asciiRecord = (raw: Buffer, plain: boolean | undefined): boolean => plain === true && isAscii(raw);

/** The byte strings of binaryRow packed into pieces of about 64 KiB, one latin1 copy a piece; a view a row (logs/repository.ts packRows). */
export const packBinary = (rows: readonly (string | undefined)[]): (Buffer | undefined)[] => packRows(rows, 'latin1');
