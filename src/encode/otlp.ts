/**
 * The `otlp` encoding: an OTLP/HTTP protobuf ExportLogsServiceRequest
 * (opentelemetry-proto, collector/logs/v1), written field by field with
 * protobufjs's Writer: no intermediate message objects. Mapping (CONTRACT
 * part 5): one ResourceLogs whose resource attributes are the batch
 * resource; one ScopeLogs (scope `logdrain` 1.0, schema_url the batch
 * schema); one LogRecord per record with times in nanoseconds, severity,
 * body, trace and span ids, event_name and attributes (the record's plus
 * `svc.record.id`).
 */
import protobuf from 'protobufjs/minimal.js';
import { SCHEMA_URL, type Encoder } from './encoder.js';
import type { AttributeValue, DeliveredRecord } from '../shape/delivered-record.js';
import { rejectedLogRecords } from './otlp-partial-success.js';

const { Writer } = protobuf;
type W = protobuf.Writer;

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

function fixed64(w: W, tag: number, v: bigint): void {
  w.uint32(tag).fixed32(Number(v & 0xffffffffn)).fixed32(Number((v >> 32n) & 0xffffffffn));
}

function anyValue(w: W, v: AttributeValue): void {
  if (typeof v === 'string') w.uint32(T.any_string).string(v);
  else if (typeof v === 'boolean') w.uint32(T.any_bool).bool(v);
  else if (Number.isSafeInteger(v)) w.uint32(T.any_int).int64(v);
  else w.uint32(T.any_double).double(v);
}

function keyValue(w: W, tag: number, key: string, v: AttributeValue): void {
  w.uint32(tag).fork().uint32(T.kv_key).string(key);
  w.uint32(T.kv_value).fork();
  anyValue(w, v);
  w.ldelim().ldelim();
}

function logRecord(w: W, r: DeliveredRecord): void {
  w.uint32(T.scopeLogs_logRecords).fork();
  fixed64(w, T.log_timeUnixNano, unixNanos(r.timestamp));
  w.uint32(T.log_severityNumber).int32(r.severityNumber);
  w.uint32(T.log_severityText).string(r.severityText);
  if (r.body !== undefined) {
    w.uint32(T.log_body).fork().uint32(T.any_string).string(r.body).ldelim();
  }
  for (const k in r.attributes) keyValue(w, T.log_attributes, k, r.attributes[k]!);
  keyValue(w, T.log_attributes, 'svc.record.id', r.id);
  if (r.traceId) w.uint32(T.log_traceId).bytes(Buffer.from(r.traceId, 'hex'));
  if (r.spanId) w.uint32(T.log_spanId).bytes(Buffer.from(r.spanId, 'hex'));
  fixed64(w, T.log_observedTimeUnixNano, unixNanos(r.observedTimestamp));
  w.uint32(T.log_eventName).string(r.eventName);
  w.ldelim();
}

export const otlpEncoder: Encoder = {
  contentType: 'application/x-protobuf',
  encode(batch) {
    const w = Writer.create();
    w.uint32(T.request_resourceLogs).fork();
    w.uint32(T.resourceLogs_resource).fork();
    for (const [k, v] of Object.entries(batch.resource)) keyValue(w, T.resource_attributes, k, v);
    w.ldelim();
    w.uint32(T.resourceLogs_scopeLogs).fork();
    w.uint32(T.scopeLogs_scope).fork().uint32(T.scope_name).string('logdrain').uint32(T.scope_version).string('1.0').ldelim();
    for (const e of batch.entries) logRecord(w, e.record);
    w.ldelim();
    w.uint32(T.resourceLogs_schemaUrl).string(SCHEMA_URL);
    w.ldelim();
    return Buffer.from(w.finish());
  },
  rejectedRecords: rejectedLogRecords,
};
