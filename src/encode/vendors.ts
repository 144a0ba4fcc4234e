/**
 * The two log vendors' intake formats (docs/delivery.md, "Vendor encodings"). Both
 * authenticate with the drain's configured headers (an API key header),
 * never with a signature.
 *
 * vendor-a: a JSON array, one entry per record: {id, timestamp (epoch ms),
 *   status (debug|info|warn|error), message, service, source: "svc", eventName,
 *   tags ("key:value" strings of the resource), attributes, traceId?, spanId?}.
 * vendor-b: NDJSON, one line per record: {_time (RFC 3339), level, message,
 *   event, id, resource (object), attributes, trace_id?, span_id?}.
 */
import type { Encoder } from './encoder.js';
import type { DeliveredRecord } from '../shape/delivered-record.js';

const STATUS: Record<DeliveredRecord['severityText'], string> = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

export const vendorAEncoder: Encoder = {
  contentType: 'application/json',
  usesRecordJson: false,
  encode(batch) {
    const tags = Object.entries(batch.resource).map(([k, v]) => `${k}:${v}`);
    const service = batch.resource['service.name'];
    return Buffer.from(
      JSON.stringify(
        batch.entries.map(({ record: r }) => ({
          id: r.id,
          timestamp: Date.parse(r.timestamp),
          status: STATUS[r.severityText],
          message: r.body ?? '',
          service,
          source: 'svc',
          eventName: r.eventName,
          tags,
          attributes: r.attributes,
          ...(r.traceId ? { traceId: r.traceId } : {}),
          ...(r.spanId ? { spanId: r.spanId } : {}),
        })),
      ),
      'utf8',
    );
  },
};

export const vendorBEncoder: Encoder = {
  contentType: 'application/x-ndjson',
  usesRecordJson: false,
  encode(batch) {
    let out = '';
    for (const { record: r } of batch.entries) {
      out +=
        JSON.stringify({
          _time: r.timestamp,
          level: STATUS[r.severityText],
          message: r.body ?? '',
          event: r.eventName,
          id: r.id,
          resource: batch.resource,
          attributes: r.attributes,
          ...(r.traceId ? { trace_id: r.traceId } : {}),
          ...(r.spanId ? { span_id: r.spanId } : {}),
        }) + '\n';
    }
    return Buffer.from(out, 'utf8');
  },
};
