/**
 * The same batch as OpenTelemetry JS SDK log records (ReadableLogRecord),
 * the input of @opentelemetry/otlp-transformer's ProtobufLogsSerializer.
 * Used by the OTLP benchmark (built in setup, outside the timed part) and by
 * the equivalence test, so both serializers describe one message: the batch
 * resource with its schema URL, scope `logdrain` 1.0, and per record the
 * mapping of src/encode/otlp.ts (times in nanoseconds, severity pair, string
 * body, the record's attributes then `svc.record.id`, trace and span ids,
 * event name).
 */
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { HrTime } from '@opentelemetry/api';
import { SCHEMA_URL, type EncodableBatch } from '../src/encode/encoder.js';
import { unixNanos } from '../src/encode/otlp.js';

function hrTime(ts: string): HrTime {
  const ns = unixNanos(ts);
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

export function sdkLogRecords(batch: EncodableBatch): ReadableLogRecord[] {
  const resource = resourceFromAttributes(batch.resource, { schemaUrl: SCHEMA_URL });
  // One scope object for the batch: the serializer groups records by scope identity.
  const instrumentationScope = { name: 'logdrain', version: '1.0' };
  return batch.entries.map(({ record: r }) => ({
    resource,
    instrumentationScope,
    hrTime: hrTime(r.timestamp),
    hrTimeObserved: hrTime(r.observedTimestamp),
    severityNumber: r.severityNumber,
    severityText: r.severityText,
    ...(r.body !== undefined ? { body: r.body } : {}),
    attributes: { ...r.attributes, 'svc.record.id': r.id },
    droppedAttributesCount: 0,
    ...(r.traceId || r.spanId ? { spanContext: { traceId: r.traceId ?? '', spanId: r.spanId ?? '', traceFlags: 0 } } : {}),
    eventName: r.eventName,
  }));
}
