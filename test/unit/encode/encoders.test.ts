import { describe, expect, it } from 'vitest';
import { jsonEncoder } from '../../../src/encode/json.js';
import { ndjsonEncoder } from '../../../src/encode/ndjson.js';
import { SCHEMA_URL, SerialisedEntry, type EncodableBatch } from '../../../src/encode/encoder.js';
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

  it('settled entries (JSON held as UTF-8) encode byte for byte as entries holding strings, multi-byte text included', () => {
    const strings = records.map((r) => new SerialisedEntry(r.id, JSON.stringify(r), 0));
    const settled = records.map((r) => new SerialisedEntry(r.id, JSON.stringify(r), 0));
    for (const e of settled) e.settle();
    expect(settled.every((e) => e.utf8 !== undefined)).toBe(true);
    expect(strings.every((e) => e.utf8 === undefined)).toBe(true);
    for (const encoder of [jsonEncoder, ndjsonEncoder]) {
      const a = Buffer.from(encoder.encode({ ...batch, entries: strings }));
      const b = Buffer.from(encoder.encode({ ...batch, entries: settled }));
      expect(b.equals(a)).toBe(true);
      expect(b.equals(Buffer.from(encoder.encode(batch)))).toBe(true);
    }
  });
});

describe('SerialisedEntry', () => {
  it('once settled, holds its JSON as UTF-8 bytes and still answers the same JSON, length and record', () => {
    const record = records[0]!;
    const json = JSON.stringify({ ...record, body: 'emoji 😀, accents é, CJK 漢字' });
    const e = new SerialisedEntry(record.id, json, 2);
    const before = e.byteLength;
    e.settle();
    e.settle();
    expect(e.utf8!.equals(Buffer.from(json, 'utf8'))).toBe(true);
    expect(e.byteLength).toBe(Buffer.byteLength(json));
    expect(before).toBe(Buffer.byteLength(json));
    expect(e.json).toBe(json);
    expect(e.record).toEqual(JSON.parse(json));
    expect(e.scrubHits).toBe(2);
  });
});

describe('SerialisedEntry slabs', () => {
  it('entries settled across many slabs, long texts and multi-byte texts among them, keep their own bytes', () => {
    const texts: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const body = i % 7 === 0 ? 'é😀漢'.repeat(i % 50) : i % 997 === 0 ? 'x'.repeat(40_000) : 'a'.repeat(i % 600);
      texts.push(JSON.stringify({ id: `r${i}`, body }));
    }
    const entries = texts.map((t, i) => new SerialisedEntry(`r${i}`, t, 0));
    for (const e of entries) e.settle();
    entries.forEach((e, i) => {
      expect(e.utf8!.equals(Buffer.from(texts[i]!, 'utf8'))).toBe(true);
      expect(e.json).toBe(texts[i]);
      expect(e.byteLength).toBe(Buffer.byteLength(texts[i]!));
    });
  });
});

