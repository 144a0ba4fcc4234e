/**
 * Our OTLP encoder against @opentelemetry/otlp-transformer 0.223's
 * ProtobufLogsSerializer, fed the same batch as SDK log records: an
 * independent decoder (the generated code of the published
 * opentelemetry-proto definitions, otlp-transformer 0.210) must read both
 * byte strings as the same ExportLogsServiceRequest.
 *
 * The bytes themselves differ by design: the transformer always writes
 * fields holding their default value (dropped_attributes_count = 0 on the
 * resource and on every log record), which proto3 lets an encoder omit and
 * ours does. So the test compares the decoded messages field by field, then
 * re-encodes both decoded messages through the decoder's own encoder and
 * requires identical bytes.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { nanoHalves, otlpEncoder, unixNanos } from '../../../src/encode/otlp.js';
import { SCHEMA_URL, type EncodableBatch } from '../../../src/encode/encoder.js';
import type { AttributeValue, DeliveredRecord } from '../../../src/shape/delivered-record.js';
import { shapeRecord } from '../../../src/shape/delivered-record.js';
import { buildResource } from '../../../src/model/resource.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';
import { sdkLogRecords } from '../../../bench/otlp-sdk-records.js';
import { attributesOf } from '../../helpers/otlp-decoder.js';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const Request: any = require('otlp-proto-decoder/build/src/generated/root.js').opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

/** Every field, defaults included (so an omitted zero equals a written zero); 64-bit integers as strings, bytes as hex. */
const decode = (bytes: Uint8Array) =>
  Request.toObject(Request.decode(bytes), { longs: String, bytes: String, defaults: true, enums: Number, arrays: true });
const hex = (b64: string) => Buffer.from(b64, 'base64').toString('hex');

function batchOf(records: DeliveredRecord[], resource = buildResource(syntheticOne(), 'eu-west-1')): EncodableBatch {
  return {
    batchId: '01JC0000000000000000000000', resource, resourceJson: JSON.stringify(resource),
    entries: records.map((record) => ({ id: record.id, record, json: JSON.stringify(record), scrubHits: 0 })),
  };
}

function syntheticOne() {
  return [...syntheticRecords(1, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot', version: '4' }] }], seed: 7 })][0]!;
}

/** Both serialisations of one batch, decoded. */
function bothDecoded(batch: EncodableBatch) {
  const ours = otlpEncoder.encode(batch);
  const theirs = ProtobufLogsSerializer.serializeRequest(sdkLogRecords(batch))!;
  return { ours, theirs, a: decode(ours), b: decode(theirs) };
}

function expectSameMessage(batch: EncodableBatch): void {
  const { a, b } = bothDecoded(batch);
  expect(a.resourceLogs).toHaveLength(1);
  expect(b.resourceLogs).toHaveLength(1);
  const [ra, rb] = [a.resourceLogs[0], b.resourceLogs[0]];
  expect(attributesOf(ra.resource.attributes)).toEqual(batch.resource);
  expect(ra.resource).toEqual(rb.resource);
  expect(ra.schemaUrl).toBe(SCHEMA_URL);
  expect(ra.schemaUrl).toBe(rb.schemaUrl);
  expect(ra.scopeLogs).toHaveLength(1);
  expect(rb.scopeLogs).toHaveLength(1);
  expect(ra.scopeLogs[0].scope).toEqual(rb.scopeLogs[0].scope);
  expect(ra.scopeLogs[0].scope).toMatchObject({ name: 'logdrain', version: '1.0' });
  expect(ra.scopeLogs[0].schemaUrl).toBe(rb.scopeLogs[0].schemaUrl);
  const [la, lb] = [ra.scopeLogs[0].logRecords, rb.scopeLogs[0].logRecords];
  expect(la).toHaveLength(batch.entries.length);
  expect(lb).toHaveLength(batch.entries.length);
  batch.entries.forEach(({ record: r }, i) => {
    const [x, y] = [la[i], lb[i]];
    expect(x.timeUnixNano).toBe(unixNanos(r.timestamp).toString());
    expect(x.timeUnixNano).toBe(y.timeUnixNano);
    expect(x.observedTimeUnixNano).toBe(unixNanos(r.observedTimestamp).toString());
    expect(x.observedTimeUnixNano).toBe(y.observedTimeUnixNano);
    expect([x.severityNumber, x.severityText]).toEqual([r.severityNumber, r.severityText]);
    expect([x.severityNumber, x.severityText]).toEqual([y.severityNumber, y.severityText]);
    expect(x.body).toEqual(y.body);
    expect(x.body?.stringValue ?? undefined).toBe(r.body);
    expect(hex(x.traceId)).toBe(r.traceId ?? '');
    expect(x.traceId).toBe(y.traceId);
    expect(hex(x.spanId)).toBe(r.spanId ?? '');
    expect(x.spanId).toBe(y.spanId);
    expect(x.eventName).toBe(r.eventName);
    expect(x.eventName).toBe(y.eventName);
    // -0 is the integer 0 to both encoders (int64 has no negative zero).
    const plain = Object.fromEntries(Object.entries(r.attributes).map(([k, v]) => [k, v === 0 ? 0 : v]));
    expect(attributesOf(x.attributes)).toEqual({ ...plain, 'svc.record.id': r.id });
    // Same keys, same order, same value kinds (int, double, string, bool).
    expect(x.attributes).toEqual(y.attributes);
    expect([x.flags, x.droppedAttributesCount]).toEqual([y.flags, y.droppedAttributesCount]);
  });
  // Nothing else differs anywhere in the message.
  expect(a).toEqual(b);
  expect(Buffer.from(Request.encode(Request.fromObject(a)).finish())).toEqual(Buffer.from(Request.encode(Request.fromObject(b)).finish()));
}

const record = (over: Partial<DeliveredRecord>): DeliveredRecord => ({
  id: 'r1', timestamp: '2026-11-22T10:00:00.123Z', observedTimestamp: '2026-11-22T10:00:01.5Z', eventName: 'svc.mcp.error',
  severityNumber: 17, severityText: 'ERROR', attributes: {}, ...over,
});

describe('otlp encoder equals otlp-transformer, read by an independent decoder', () => {
  it('synthetic records, shaped as the pipeline shapes them', () => {
    const agents = [{ id: 'agt_support', name: 'support-bot', version: '4' }];
    const source = [...syntheticRecords(300, { orgs: [{ orgId: 'org_acme', agents }], seed: 11 })];
    const observed = '2026-11-23T10:00:00.987654Z';
    const shaped = source.map((r, i) => shapeRecord({ ...r, timestamp: new Date(1_795_400_000_000 + i * 37).toISOString() }, observed, { includeContent: i % 2 === 0, redact: null }));
    expectSameMessage(batchOf(shaped, buildResource(source[0]!, 'eu-west-1')));
  });

  it('edge values: nanosecond fractions, offsets, unicode, long bodies, 64-bit and negative integers, doubles, no ids', () => {
    expectSameMessage(batchOf([
      record({ timestamp: '2026-11-22T12:00:00.123456789+02:00', observedTimestamp: '2026-11-22T10:00:00.000000001Z', body: '' }),
      record({ id: 'r2', body: 'héllo “quoted” 😀 — 日本語', traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331',
        attributes: { 'ünï': 'çödé', big: 2 ** 60, neg: -42, min: -(2 ** 63), ratio: 0.25, huge: 1e300, zero: 0, f: false, t: true } }),
      record({ id: 'r3', body: 'x'.repeat(20_000) + 'é'.repeat(70_000), spanId: 'b7ad6b7169203331', attributes: { long: 'y'.repeat(300) } }),
      record({ id: 'r4', timestamp: '1970-01-01T00:00:00.000001Z', severityNumber: 5, severityText: 'DEBUG' }),
    ]));
  });

  it('any record the shaper can produce (property)', () => {
    const attrValue: fc.Arbitrary<AttributeValue> = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }), fc.boolean(), fc.integer(), fc.maxSafeInteger(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    const time = fc.tuple(fc.integer({ min: 86_400_000, max: 4_000_000_000_000 }), fc.stringMatching(/^(\.\d{1,9})?$/), fc.constantFrom('Z', '+02:00', '-05:30'))
      .map(([ms, frac, zone]) => {
        const iso = new Date(ms).toISOString().slice(0, 19);
        return `${iso}${frac}${zone}`;
      });
    const rec = fc.record({
      id: fc.string({ minLength: 1, maxLength: 30 }), timestamp: time, observedTimestamp: time,
      eventName: fc.string({ minLength: 1, maxLength: 40 }), severity: fc.constantFrom<[number, string]>([5, 'DEBUG'], [9, 'INFO'], [13, 'WARN'], [17, 'ERROR']),
      body: fc.option(fc.string({ unit: 'binary', maxLength: 1000 }), { nil: undefined }),
      traceId: fc.option(fc.stringMatching(/^[0-9a-f]{32}$/), { nil: undefined }),
      spanId: fc.option(fc.stringMatching(/^[0-9a-f]{16}$/), { nil: undefined }),
      attributes: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }).filter((k) => k !== 'svc.record.id' && k !== '__proto__'), attrValue, { maxKeys: 8 }),
    }).map(({ severity: [n, t], body, traceId, spanId, ...r }) => ({
      ...r, severityNumber: n as number, severityText: t as DeliveredRecord['severityText'],
      ...(body !== undefined ? { body } : {}), ...(traceId ? { traceId } : {}), ...(spanId ? { spanId } : {}),
    }));
    fc.assert(fc.property(fc.array(rec, { minLength: 1, maxLength: 8 }), (records) => expectSameMessage(batchOf(records))), { numRuns: 80 });
  });

  it('nanoHalves (the fast path) agrees with exact BigInt arithmetic', () => {
    fc.assert(fc.property(fc.integer({ min: -10_000_000_000, max: 8_000_000_000_000 }), fc.stringMatching(/^(\.\d{1,9})?$/), fc.constantFrom('Z', 'z', '+02:00', '-05:30'), (ms, frac, zone) => {
      const ts = `${new Date(ms).toISOString().slice(0, 19)}${frac}${zone}`;
      const ns = unixNanos(ts);
      expect(nanoHalves(ts)).toEqual([Number(ns & 0xffffffffn), Number((ns >> 32n) & 0xffffffffn)]);
    }), { numRuns: 2000 });
  });
});
