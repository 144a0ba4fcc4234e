/**
 * The agent execution record of CONTRACT part 3, and its decoder. The decoder
 * is hand-written rather than schema-driven because it runs once per consumed
 * message; `schemas/agent-record.schema.json` states the same rules and a test
 * holds the two in agreement.
 */
import { isUtf8 } from 'node:buffer';
import type { Environment, Severity } from './drain.js';
import { BOUNDED_STRING_FIELDS, RECORD_LIMITS, utf8Over } from './record-limits.js';

export interface AgentRecord {
  id: string;
  orgId: string;
  agentId: string;
  agentName: string;
  agentVersion?: string;
  environment: Environment;
  source: string;
  event: string;
  severity: Severity;
  timestamp: string;
  executionId: string;
  message?: string;
  traceId?: string;
  spanId?: string;
  attributes?: Record<string, string | number | boolean>;
}

/**
 * `json`: the record as it came, for the platform copy (stored as it came): the
 * message's own bytes when they are valid UTF-8, which Postgres then reads
 * without the worker encoding the text again; otherwise the decoded text.
 * `timeMs`: the record's timestamp in milliseconds since the epoch, parsed once
 * by the validation (the platform copy's day partition needs it too).
 * `plain`: the JSON text held no backslash, so no string of the record holds one, nor a tab, a
 * newline or a carriage return (JSON writes those inside a string only as escapes).
 */
export type DecodeResult = { ok: true; record: AgentRecord; timeMs: number; json?: string | Buffer; plain?: boolean } | { ok: false; reason: string };

// source, event, traceId and spanId are checked by hand (validateRecord) as these patterns of
// schemas/agent-record.schema.json say: source ^[a-z_-]+$, event ^[a-z]+$, traceId ^[0-9a-f]{32}$,
// spanId ^[0-9a-f]{16}$.
// RFC 3339: date, 'T' (or 't'/' '), time with optional fraction, and a zone.
const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
const REQUIRED_STRINGS = ['id', 'orgId', 'agentId', 'agentName', 'executionId'] as const;
/**
 * Fields a record does not define are kept (in the platform copy's text) but may not nest deeper
 * than this: Postgres parses that text recursively, and a record nested thousands deep failed every
 * accounting write it was part of ("stack depth limit exceeded"), holding its offset forever.
 */
export const MAX_FIELD_DEPTH = RECORD_LIMITS.fieldDepth;
const DEFINED_FIELDS = new Set(['id', 'orgId', 'agentId', 'agentName', 'agentVersion', 'environment', 'source', 'event', 'severity', 'timestamp', 'executionId', 'message', 'traceId', 'spanId', 'attributes']);

/** Whether a JSON value nests deeper than `max` levels (iterative: the value may be deeper than the stack). */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) pending.push([child, depth + 1]);
  }
  return false;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A UTF-16 surrogate without its pair. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether any string or key of a JSON value matches `pattern`, at any depth (iterative: values may nest deeper than the stack). */
export function holdsText(value: unknown, pattern: RegExp): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (pattern.test(v)) return true;
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        if (pattern.test(k)) return true;
        pending.push(child);
      }
    }
  }
  return false;
}

/** Larger messages are refused: a record is a log line, not a payload channel. */
export const MAX_RECORD_BYTES = RECORD_LIMITS.recordBytes;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Whether year-month-day is a day the (proleptic Gregorian) calendar has: Date rolls 2026-02-30 over to March. */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= (month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!);
}

/**
 * An RFC 3339 timestamp that names a real instant, in milliseconds; NaN otherwise. `Date.parse`
 * alone rolls impossible dates over (2026-02-30 became March 2nd, 24:00 the next day) instead of
 * refusing them, so the fields are checked against the calendar first. Years before 1 have no
 * Postgres timestamp either.
 */
export function parseRfc3339(text: string): number {
  const fast = parseUtcMillis(text);
  return fast === undefined ? parseRfc3339Slow(text) : fast;
}

/** The digits of `text` from `from` to `to` as a number; -1 where one is not an ASCII digit. */
function digitsAt(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * The common form, `YYYY-MM-DDTHH:MM:SS[.sss]Z`, read without a regular expression: NaN where it
 * names no instant, undefined for any other form (the regular expression then decides). Every
 * consumed record's timestamp is parsed once, and the expression's captures and Date.parse were
 * a few percent of the worker's routing.
 */
function parseUtcMillis(text: string): number | undefined {
  const n = text.length;
  if ((n !== 20 && n !== 24) || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || text.charCodeAt(n - 1) !== 90) return undefined;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  const hour = digitsAt(text, 11, 13);
  const minute = digitsAt(text, 14, 16);
  const second = digitsAt(text, 17, 19);
  let ms = 0;
  if (n === 24) {
    if (text.charCodeAt(19) !== 46) return undefined;
    ms = digitsAt(text, 20, 23);
  }
  // Date.UTC reads years 0 to 99 as 1900 to 1999: those, and anything not all digits, take the long way.
  if (year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || ms < 0) return undefined;
  if (!isCalendarDay(year, month, day) || hour > 23 || minute > 59 || second > 59) return NaN;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

function parseRfc3339Slow(text: string): number {
  const m = RFC3339_RE.exec(text);
  if (!m) return NaN;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (year < 1 || !isCalendarDay(year, month, day)) return NaN;
  if (hour > 23 || minute > 59 || second > 59) return NaN;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return NaN;
  return Date.parse(text);
}

export function decodeRecord(raw: Buffer | string): DecodeResult {
  const size = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.length;
  if (size > MAX_RECORD_BYTES) return { ok: false, reason: `record of ${size} bytes exceeds ${MAX_RECORD_BYTES}` };
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  const escapes = text.includes('\\');
  // Postgres text cannot hold NUL: such a record could never be stored, so it is refused here.
  if (escapes && holdsNul(text)) return { ok: false, reason: NUL_REASON };
  const result = validateRecord(value);
  if (!result.ok) return result;
  if (escapes && holdsLoneSurrogate(text, value)) return { ok: false, reason: LONE_SURROGATE_REASON };
  result.plain = !escapes;
  // Bytes that are not UTF-8 decode to U+FFFD, so a text without one came from valid UTF-8 and
  // only the rare text holding one needs the bytes checked (65 ns a record otherwise).
  result.json = typeof raw !== 'string' && (!text.includes('\uFFFD') || isUtf8(raw)) ? raw : text;
  return result;
}

/**
 * What decodeRecord would refuse in `text`, the JSON text of `value`, that validateRecord does not
 * see in the value: its size, NUL, half a surrogate pair. For a record already parsed and validated
 * whose text is at hand (the ingest route's, serialised from the value), without parsing it again.
 */
export function textRefusal(text: string, value: unknown): string | undefined {
  const size = Buffer.byteLength(text);
  if (size > MAX_RECORD_BYTES) return `record of ${size} bytes exceeds ${MAX_RECORD_BYTES}`;
  if (holdsNul(text)) return NUL_REASON;
  if (holdsLoneSurrogate(text, value)) return LONE_SURROGATE_REASON;
  return undefined;
}

const NUL_REASON = 'contains a NUL character (\\u0000)';
const LONE_SURROGATE_REASON = 'contains half of a UTF-16 surrogate pair';
// Both checks below look for \u escapes, which most records have none of: one search skips them.
const holdsNul = (text: string): boolean => text.includes('\\u') && text.includes('\\u0000');
// Nor can Postgres's JSON parser take half a surrogate pair (\ud800 alone), which failed the platform
// copy's write, and every write it was part of, forever. Only texts holding such an escape are walked.
const holdsLoneSurrogate = (text: string, value: unknown): boolean =>
  text.includes('\\u') && SURROGATE_ESCAPE.test(text) && holdsText(value, LONE_SURROGATE);

/** Whether `text` is `length` lowercase hex digits (traceId, spanId), without running an expression. */
function isLowerHex(text: string, length: number): boolean {
  if (text.length !== length) return false;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    // 0-9 or a-f
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** Whether `text` is one or more of a-z, and `_` or `-` where `marks` (event; source). */
function isLowerWord(text: string, marks: boolean): boolean {
  const n = text.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) continue;
    if (marks && (c === 95 || c === 45)) continue;
    return false;
  }
  return true;
}

/** The reason a required string field is refused, or undefined (REQUIRED_STRINGS, then its bound). */
const requiredString = (v: unknown, f: (typeof REQUIRED_STRINGS)[number]): string | undefined =>
  typeof v !== 'string' || v.length === 0 ? `${f} must be a non-empty string` : undefined;

/**
 * The record's checks, in the order of the reasons they give (the first failing one is answered).
 * Each field is read by name, not through a loop over field names: a keyed read of a record whose
 * shape varies is a slow lookup, and there were some twenty a record (about 0.8 µs a record with the
 * expressions, in process). The character checks answer as the schema's patterns do (a test
 * holds them to the patterns).
 */
export function validateRecord(value: unknown): DecodeResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  const r = value as Record<string, unknown>;
  const id = r.id, orgId = r.orgId, agentId = r.agentId, agentName = r.agentName, executionId = r.executionId;
  const missing = requiredString(id, 'id') ?? requiredString(orgId, 'orgId') ?? requiredString(agentId, 'agentId') ?? requiredString(agentName, 'agentName') ?? requiredString(executionId, 'executionId');
  if (missing !== undefined) return { ok: false, reason: missing };
  const agentVersion = r.agentVersion, source = r.source, event = r.event;
  // BOUNDED_STRING_FIELDS, in its order (a test holds the two lists together).
  if (utf8Over(id as string, RECORD_LIMITS.id)) return overBound('id');
  if (utf8Over(orgId as string, RECORD_LIMITS.orgId)) return overBound('orgId');
  if (utf8Over(agentId as string, RECORD_LIMITS.agentId)) return overBound('agentId');
  if (utf8Over(agentName as string, RECORD_LIMITS.agentName)) return overBound('agentName');
  if (typeof agentVersion === 'string' && utf8Over(agentVersion, RECORD_LIMITS.agentVersion)) return overBound('agentVersion');
  if (utf8Over(executionId as string, RECORD_LIMITS.executionId)) return overBound('executionId');
  if (typeof source === 'string' && utf8Over(source, RECORD_LIMITS.source)) return overBound('source');
  if (typeof event === 'string' && utf8Over(event, RECORD_LIMITS.event)) return overBound('event');
  if (r.environment !== 'production' && r.environment !== 'sandbox') {
    return { ok: false, reason: 'environment must be production or sandbox' };
  }
  if (typeof source !== 'string' || !isLowerWord(source, true)) {
    return { ok: false, reason: 'source must be lowercase letters, _ or -' };
  }
  if (typeof event !== 'string' || !isLowerWord(event, false)) {
    return { ok: false, reason: 'event must be lowercase letters' };
  }
  const severity = r.severity;
  if (severity !== 'info' && severity !== 'debug' && severity !== 'warn' && severity !== 'error') {
    return { ok: false, reason: 'severity must be debug, info, warn or error' };
  }
  const timeMs = typeof r.timestamp === 'string' ? parseRfc3339(r.timestamp) : NaN;
  if (Number.isNaN(timeMs)) return { ok: false, reason: 'timestamp must be RFC 3339' };
  if (agentVersion !== undefined && typeof agentVersion !== 'string') {
    return { ok: false, reason: 'agentVersion must be a string' };
  }
  if (r.message !== undefined && typeof r.message !== 'string') return { ok: false, reason: 'message must be a string' };
  const traceId = r.traceId, spanId = r.spanId;
  if (traceId !== undefined && (typeof traceId !== 'string' || !isLowerHex(traceId, 32))) {
    return { ok: false, reason: 'traceId must be 32 lowercase hex characters' };
  }
  if (spanId !== undefined && (typeof spanId !== 'string' || !isLowerHex(spanId, 16))) {
    return { ok: false, reason: 'spanId must be 16 lowercase hex characters' };
  }
  if (r.attributes !== undefined) {
    const a = r.attributes;
    if (typeof a !== 'object' || a === null || Array.isArray(a)) return { ok: false, reason: 'attributes must be an object' };
    let count = 0;
    for (const k in a) {
      if (++count > RECORD_LIMITS.attributes) return { ok: false, reason: `attributes holds more than ${RECORD_LIMITS.attributes} keys` };
      if (utf8Over(k, RECORD_LIMITS.attributeKey)) return { ok: false, reason: `an attribute key exceeds ${RECORD_LIMITS.attributeKey} bytes` };
      const t = typeof (a as Record<string, unknown>)[k];
      if (t !== 'string' && t !== 'number' && t !== 'boolean') {
        return { ok: false, reason: `attributes.${k.slice(0, 64)} must be a string, number or boolean` };
      }
    }
  }
  for (const k in r) {
    const v = r[k];
    if (typeof v === 'object' && v !== null && !DEFINED_FIELDS.has(k) && nestsDeeperThan(v, MAX_FIELD_DEPTH)) {
      return { ok: false, reason: `${k.slice(0, 64)} nests deeper than ${MAX_FIELD_DEPTH} levels` };
    }
  }
  // Every field of the answer from the start: fields added to the literal later (decodeRecord's
  // `json` and `plain`) made it grow a property store of its own, one more object a record.
  return { ok: true, record: r as unknown as AgentRecord, timeMs, json: undefined, plain: undefined };
}

const overBound = (f: (typeof BOUNDED_STRING_FIELDS)[number]): DecodeResult => ({ ok: false, reason: `${f} exceeds ${RECORD_LIMITS[f]} bytes` });

/**
 * The organization a refused message names, when it is a JSON object with a usable `orgId` (the
 * decoder refused it for another reason, or for its size: it is parsed here whatever its size, on
 * this rare path only); undefined otherwise. Its dead letter is then counted by that organization's
 * drains (docs/delivery.md, "Where every record went").
 */
export function orgIdOf(raw: Buffer | string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const orgId = (value as { orgId?: unknown }).orgId;
  return typeof orgId === 'string' && orgId.length > 0 && !utf8Over(orgId, RECORD_LIMITS.orgId) ? orgId : undefined;
}

/** A bounded label for a dead letter's reason, the decoder's or `empty message` (the reason itself may quote field names). */
export function deadLetterClass(reason: string): 'not_json' | 'too_large' | 'empty' | 'invalid' {
  if (reason === 'not valid JSON') return 'not_json';
  if (reason.startsWith('record of')) return 'too_large';
  if (reason === 'empty message') return 'empty';
  return 'invalid';
}
