/**
 * An OTLP decoder independent of ours: the protobufjs static code that the
 * OpenTelemetry JS project generated from the published opentelemetry-proto
 * message definitions (@opentelemetry/otlp-transformer 0.210, the last
 * release that ships it, installed under the alias `otlp-proto-decoder`).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const root: any = require('otlp-proto-decoder/build/src/generated/root.js');
const v1 = root.opentelemetry.proto.collector.logs.v1;

/** Decodes an ExportLogsServiceRequest; 64-bit integers as decimal strings, bytes as hex. */
export function decodeExportLogsRequest(bytes: Buffer): any {
  const msg = v1.ExportLogsServiceRequest.decode(bytes);
  return v1.ExportLogsServiceRequest.toObject(msg, { longs: String, bytes: String, defaults: false, enums: Number });
}

export function encodeExportLogsResponse(p: { rejectedLogRecords: number; errorMessage?: string }): Buffer {
  const msg = v1.ExportLogsServiceResponse.create({ partialSuccess: { rejectedLogRecords: p.rejectedLogRecords, errorMessage: p.errorMessage ?? '' } });
  return Buffer.from(v1.ExportLogsServiceResponse.encode(msg).finish());
}

/** Flattens OTLP KeyValue[] into a plain object. */
export function attributesOf(kvs: { key: string; value: Record<string, unknown> }[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs ?? []) {
    const v = kv.value;
    out[kv.key] = v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue);
  }
  return out;
}
