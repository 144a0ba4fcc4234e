import { describe, expect, it } from 'vitest';
import { otlpEncoder, unixNanos } from '../../../src/encode/otlp.js';
import { rejectedLogRecords } from '../../../src/encode/otlp-partial-success.js';
import { SCHEMA_URL, type EncodableBatch } from '../../../src/encode/encoder.js';
import type { DeliveredRecord } from '../../../src/shape/delivered-record.js';
import { attributesOf, decodeExportLogsRequest, encodeExportLogsResponse } from '../../helpers/otlp-decoder.js';

const resource = {
  'service.name': 'support-bot', 'service.namespace': 'org_acme', 'service.instance.id': 'agt_support', 'service.version': '4',
  'deployment.environment.name': 'production', 'svc.org.id': 'org_acme', 'svc.agent.id': 'agt_support',
};
const records: DeliveredRecord[] = [
  {
    id: 'r1', timestamp: '2026-11-22T10:00:00.123Z', observedTimestamp: '2026-11-22T10:00:01.5Z', eventName: 'svc.mcp.error',
    severityNumber: 17, severityText: 'ERROR', body: 'tool failed', traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331',
    attributes: { tool: 'search', ms: 12, ok: false, ratio: 0.25 },
  },
  { id: 'r2', timestamp: '2026-11-22T10:00:00Z', observedTimestamp: '2026-11-22T10:00:00Z', eventName: 'svc.skill.invoked', severityNumber: 9, severityText: 'INFO', attributes: {} },
  { id: 'r3', timestamp: '2026-11-22T12:00:00.123456789+02:00', observedTimestamp: '2026-11-22T10:00:00.000000001Z', eventName: 'svc.execution.step', severityNumber: 5, severityText: 'DEBUG', body: '', attributes: {} },
];
const batch: EncodableBatch = {
  batchId: '01JC0000000000000000000000', resource, resourceJson: JSON.stringify(resource),
  entries: records.map((record) => ({ id: record.id, record, json: JSON.stringify(record), scrubHits: 0 })),
};

describe('otlp encoder, checked with an independent decoder', () => {
  const decoded = decodeExportLogsRequest(otlpEncoder.encode(batch));
  const rl = decoded.resourceLogs[0];
  const logs = rl.scopeLogs[0].logRecords;

  it('puts the batch resource in one ResourceLogs with one scope', () => {
    expect(decoded.resourceLogs).toHaveLength(1);
    expect(attributesOf(rl.resource.attributes)).toEqual(resource);
    expect(rl.schemaUrl).toBe(SCHEMA_URL);
    expect(rl.scopeLogs[0].scope).toEqual({ name: 'logdrain', version: '1.0' });
    expect(logs).toHaveLength(3);
  });

  it('maps every record field, with exact nanosecond times', () => {
    expect(logs[0]).toMatchObject({
      timeUnixNano: '1795341600123000000', observedTimeUnixNano: '1795341601500000000', severityNumber: 17, severityText: 'ERROR',
      body: { stringValue: 'tool failed' }, traceId: Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex').toString('base64'),
      eventName: 'svc.mcp.error',
    });
    expect(Buffer.from(logs[0].spanId, 'base64').toString('hex')).toBe('b7ad6b7169203331');
    expect(attributesOf(logs[0].attributes)).toEqual({ tool: 'search', ms: 12, ok: false, ratio: 0.25, 'svc.record.id': 'r1' });
    const kinds = Object.fromEntries(logs[0].attributes.map((kv: { key: string; value: object }) => [kv.key, Object.keys(kv.value)[0]]));
    expect(kinds).toEqual({ tool: 'stringValue', ms: 'intValue', ok: 'boolValue', ratio: 'doubleValue', 'svc.record.id': 'stringValue' });
    expect(logs[1].body).toBeUndefined();
    expect(logs[1].traceId).toBeUndefined();
    expect(attributesOf(logs[1].attributes)).toEqual({ 'svc.record.id': 'r2' });
    expect(logs[2].timeUnixNano).toBe('1795341600123456789');
    expect(logs[2].observedTimeUnixNano).toBe('1795341600000000001');
    expect(logs[2].body).toEqual({ stringValue: '' });
  });

  it('computes nanoseconds without float rounding', () => {
    expect(unixNanos('1970-01-01T00:00:00.000000001Z')).toBe(1n);
    expect(unixNanos('2262-04-11T23:47:16.854775807Z')).toBe(9223372036854775807n);
  });
});

describe('OTLP partial success', () => {
  it('reads refused records from protobuf and JSON answers', () => {
    expect(rejectedLogRecords(encodeExportLogsResponse({ rejectedLogRecords: 3, errorMessage: 'bad' }), 'application/x-protobuf')).toBe(3);
    expect(rejectedLogRecords(encodeExportLogsResponse({ rejectedLogRecords: 0 }), 'application/x-protobuf')).toBe(0);
    expect(rejectedLogRecords(Buffer.from('{"partialSuccess":{"rejectedLogRecords":"7"}}'), 'application/json')).toBe(7);
    expect(rejectedLogRecords(Buffer.from('{"partialSuccess":{"rejectedLogRecords":2}}'), 'application/json; charset=utf-8')).toBe(2);
    expect(rejectedLogRecords(Buffer.from('{}'), 'application/json')).toBe(0);
  });

  it('counts nothing for empty or unreadable answers, never throwing', () => {
    expect(rejectedLogRecords(Buffer.alloc(0), 'application/x-protobuf')).toBe(0);
    expect(rejectedLogRecords(Buffer.from([0xff, 0xff, 0xff]), 'application/x-protobuf')).toBe(0);
    expect(rejectedLogRecords(Buffer.from('not json'), 'application/json')).toBe(0);
  });
});
