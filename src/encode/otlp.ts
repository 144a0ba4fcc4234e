/**
 * The `otlp` encoding: an OTLP/HTTP protobuf ExportLogsServiceRequest
 * (opentelemetry-proto, collector/logs/v1), written field by field straight
 * into one buffer (ProtoWriter): no intermediate message objects. Mapping
 * (CONTRACT part 5): one ResourceLogs whose resource attributes are the
 * batch resource; one ScopeLogs (scope `logdrain` 1.0), the ResourceLogs'
 * schema_url the batch schema; one LogRecord per record with times in
 * nanoseconds, severity, body, trace and span ids, event_name and attributes
 * (the record's plus `svc.record.id`). Default values (zero dropped counts,
 * no flags) are left out, as proto3 allows.
 */
import { SCHEMA_URL, type Encoder } from './encoder.js';
import type { AttributeValue, DeliveredRecord } from '../shape/delivered-record.js';
import { rejectedLogRecords } from './otlp-partial-success.js';
import { ProtoWriter } from './proto-writer.js';

// Tags: (field number << 3) | wire type (0 varint, 1 fixed64, 2 length-delimited).
const T = {
  request_resourceLogs: (1 << 3) | 2,
  resourceLogs_resource: (1 << 3) | 2,
  resourceLogs_scopeLogs: (2 << 3) | 2,
  resourceLogs_schemaUrl: (3 << 3) | 2,
  resource_attributes: (1 << 3) | 2,
  scopeLogs_scope: (1 << 3) | 2,
  scopeLogs_logRecords: (2 << 3) | 2,
  scope_name: (1 << 3) | 2,
  scope_version: (2 << 3) | 2,
  log_timeUnixNano: (1 << 3) | 1,
  log_severityNumber: (2 << 3) | 0,
  log_severityText: (3 << 3) | 2,
  log_body: (5 << 3) | 2,
  log_attributes: (6 << 3) | 2,
  log_traceId: (9 << 3) | 2,
  log_spanId: (10 << 3) | 2,
  log_observedTimeUnixNano: (11 << 3) | 1,
  log_eventName: (12 << 3) | 2,
  kv_key: (1 << 3) | 2,
  kv_value: (2 << 3) | 2,
  any_string: (1 << 3) | 2,
  any_bool: (2 << 3) | 0,
  any_int: (3 << 3) | 0,
  any_double: (4 << 3) | 1,
} as const;

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/** Nanoseconds since the epoch of an RFC 3339 time, exactly (fractions below a millisecond kept). */
export function unixNanos(ts: string): bigint {
  const m = RFC3339.exec(ts);
  if (!m) return BigInt(Date.parse(ts) || 0) * 1_000_000n;
  const seconds = Date.parse(`${m[1]}T${m[2]}${m[4] === 'z' ? 'Z' : m[4]}`);
  const fraction = (m[3] ?? '').slice(0, 9).padEnd(9, '0');
  return BigInt(seconds) * 1_000_000n + BigInt(fraction);
}

const TWO_32 = 0x100000000;

const digit = (s: string, i: number): number => s.charCodeAt(i) - 48;
const two = (s: string, i: number): number => digit(s, i) * 10 + digit(s, i + 1);

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * Milliseconds of an RFC 3339 time (fraction truncated, as Date.parse does).
 * The common UTC form `YYYY-MM-DDTHH:MM:SS[.fff...]Z` is read digit by
 * digit; anything else (offsets) goes to Date.parse. Records were validated
 * as RFC 3339 on the way in, so both read the same valid time.
 */
function utcMillis(ts: string): number {
  const last = ts.charCodeAt(ts.length - 1);
  if ((last !== 90 && last !== 122) /* Z z */ || ts.length < 20 || ts.charCodeAt(4) !== 45 || ts.charCodeAt(13) !== 58) return Date.parse(ts);
  const y = two(ts, 0) * 100 + two(ts, 2);
  let ms = (((daysFromCivil(y, two(ts, 5), two(ts, 8)) * 24 + two(ts, 11)) * 60 + two(ts, 14)) * 60 + two(ts, 17)) * 1000;
  if (ts.charCodeAt(19) === 46 /* . */) {
    for (let i = 20, scale = 100; i < 23; i++, scale /= 10) {
      const d = digit(ts, i);
      if (!(d >= 0 && d <= 9)) break;
      ms += d * scale;
    }
  }
  return ms;
}

/**
 * An RFC 3339 time as the two 32-bit halves of its nanoseconds since the
 * epoch, without BigInt: Date.parse gives the milliseconds (it truncates the
 * fraction), the fraction's digits 4 to 9 the rest. Times before 1970 or
 * that Date.parse refuses take the exact BigInt path.
 */
export function nanoHalves(ts: string): [lo: number, hi: number] {
  const ms = utcMillis(ts);
  if (!(ms >= 0)) {
    const ns = unixNanos(ts);
    return [Number(ns & 0xffffffffn), Number((ns >> 32n) & 0xffffffffn)];
  }
  let sub = 0;
  if (ts.charCodeAt(19) === 46 /* . */) {
    // The fraction's digits after the third, padded to six: nanoseconds within the millisecond.
    let scale = 100_000;
    for (let i = 20; scale >= 1; i++) {
      const d = ts.charCodeAt(i) - 48;
      if (!(d >= 0 && d <= 9)) break;
      if (i >= 23) {
        sub += d * scale;
        scale /= 10;
      }
    }
  }
  // total = ms * 1e6 + sub, kept below 2^53 at each step: ms = msHi * 2^16 + msLo.
  const msLo = ms % 0x10000;
  const b = ((ms - msLo) / 0x10000) * 1_000_000;
  let lo = (b % 0x10000) * 0x10000 + msLo * 1_000_000 + sub;
  const carry = Math.floor(lo / TWO_32);
  lo -= carry * TWO_32;
  return [lo, Math.floor(b / 0x10000) + carry];
}

/** The observed time is the same for every record of a pipeline pass: its halves are kept. */
let observedText = '';
let observedHalves: [number, number] = [0, 0];

function time(w: ProtoWriter, tag: number, ts: string): void {
  const [lo, hi] = nanoHalves(ts);
  w.tag(tag);
  w.fixed64(lo, hi);
}

function observedTime(w: ProtoWriter, ts: string): void {
  if (ts !== observedText) {
    observedHalves = nanoHalves(ts);
    observedText = ts;
  }
  w.tag(T.log_observedTimeUnixNano);
  w.fixed64(observedHalves[0], observedHalves[1]);
}

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

function anyValue(w: ProtoWriter, v: AttributeValue): void {
  if (typeof v === 'string') {
    w.tag(T.any_string);
    w.string(v);
  } else if (typeof v === 'boolean') {
    w.tag(T.any_bool);
    w.uint32(v ? 1 : 0);
  } else if (Number.isInteger(v) && v >= MIN_INT64 && v < MAX_INT64) {
    // Integers within int64 (as otlp-transformer decides): int_value; anything else: double_value.
    w.tag(T.any_int);
    w.int64(v);
  } else {
    w.tag(T.any_double);
    w.double(v);
  }
}

function keyValue(w: ProtoWriter, tag: number, key: string, v: AttributeValue): void {
  w.tag(tag);
  const kv = w.begin(1);
  w.tag(T.kv_key);
  w.string(key);
  w.tag(T.kv_value);
  const any = w.begin(1);
  anyValue(w, v);
  w.end(any);
  w.end(kv);
}

function logRecord(w: ProtoWriter, r: DeliveredRecord): void {
  w.tag(T.scopeLogs_logRecords);
  // Most records are 128 bytes to 16 KiB long: a two-byte length.
  const mark = w.begin(2);
  time(w, T.log_timeUnixNano, r.timestamp);
  w.tag(T.log_severityNumber);
  w.uint32(r.severityNumber);
  w.tag(T.log_severityText);
  w.string(r.severityText);
  if (r.body !== undefined) {
    w.tag(T.log_body);
    const body = w.begin(r.body.length < 40 ? 1 : 2);
    w.tag(T.any_string);
    w.string(r.body);
    w.end(body);
  }
  for (const k in r.attributes) keyValue(w, T.log_attributes, k, r.attributes[k]!);
  keyValue(w, T.log_attributes, 'svc.record.id', r.id);
  if (r.traceId) {
    w.tag(T.log_traceId);
    w.hexBytes(r.traceId);
  }
  if (r.spanId) {
    w.tag(T.log_spanId);
    w.hexBytes(r.spanId);
  }
  observedTime(w, r.observedTimestamp);
  w.tag(T.log_eventName);
  w.string(r.eventName);
  w.end(mark);
}

export const otlpEncoder: Encoder = {
  contentType: 'application/x-protobuf',
  usesRecordJson: false,
  encode(batch) {
    // A first guess of 512 bytes a record (the writer grows when it must): the records' JSON, a
    // better guess, is never made for OTLP drains.
    const w = new ProtoWriter(256 + batch.entries.length * 512);
    w.tag(T.request_resourceLogs);
    const resourceLogs = w.begin(3);
    w.tag(T.resourceLogs_resource);
    const resource = w.begin(2);
    for (const k in batch.resource) keyValue(w, T.resource_attributes, k, batch.resource[k]!);
    w.end(resource);
    w.tag(T.resourceLogs_scopeLogs);
    const scopeLogs = w.begin(3);
    w.tag(T.scopeLogs_scope);
    const scope = w.begin(1);
    w.tag(T.scope_name);
    w.string('logdrain');
    w.tag(T.scope_version);
    w.string('1.0');
    w.end(scope);
    for (const e of batch.entries) logRecord(w, e.record);
    w.end(scopeLogs);
    w.tag(T.resourceLogs_schemaUrl);
    w.string(SCHEMA_URL);
    w.end(resourceLogs);
    return w.finish();
  },
  rejectedRecords: rejectedLogRecords,
};
