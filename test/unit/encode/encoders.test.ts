import { describe, expect, it } from 'vitest';
import { jsonEncoder } from '../../../src/encode/json.js';
import { ndjsonEncoder } from '../../../src/encode/ndjson.js';
import { SCHEMA_URL, type EncodableBatch } from '../../../src/encode/encoder.js';
import type { DeliveredRecord } from '../../../src/shape/delivered-record.js';
import { validateBatch } from '../../helpers/receiver.js';

const records: DeliveredRecord[] = [
  { id: 'r1', timestamp: '2026-01-01T00:00:00Z', observedTimestamp: '2026-01-01T00:00:01Z', eventName: 'svc.mcp.error', severityNumber: 17, severityText: 'ERROR' as const, body: 'héllo "quoted"\n', attributes: { a: 1 } },
  { id: 'r2', timestamp: '2026-01-01T00:00:00Z', observedTimestamp: '2026-01-01T00:00:01Z', eventName: 'svc.skill.invoked', severityNumber: 9, severityText: 'INFO' as const, attributes: {} },
];
const resource = { 'service.name': 'bot', 'service.namespace': 'o', 'service.instance.id': 'a', 'deployment.environment.name': 'production', 'svc.org.id': 'o', 'svc.agent.id': 'a' };
const batch: EncodableBatch = {
  batchId: '01JC0000000000000000000000', resource, resourceJson: JSON.stringify(resource),
  entries: records.map((record) => ({ id: record.id, record, json: JSON.stringify(record), scrubHits: 0 })),
};

describe('encoders', () => {
  it('json: the batch of spec part 2.3, equal to serialising the object', () => {
    const out = JSON.parse(jsonEncoder.encode(batch).toString('utf8'));
    expect(out).toEqual({ schemaUrl: SCHEMA_URL, batchId: batch.batchId, resource, records });
    expect(validateBatch(out)).toBe(true);
  });

  it('ndjson: one record a line, each with schemaUrl, batchId and resource', () => {
    const text = ndjsonEncoder.encode(batch).toString('utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    lines.forEach((l, i) => expect(JSON.parse(l)).toEqual({ schemaUrl: SCHEMA_URL, batchId: batch.batchId, resource, ...records[i] }));
  });
});
