/**
 * Encodings without a batch id in the body are computed once for drains that
 * send the very same entries, and their gzip too; anything else is encoded
 * afresh. json bodies (batch id in the head) share their records text and
 * its compression, and their gzip must still read back as the exact body.
 */
import { constants as zlibConstants, deflateRawSync, gunzipSync, gzip as gzipCb } from 'node:zlib';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { gzipOnce, sharedEncoding } from '../../../src/encode/shared-encoding.js';
import { otlpEncoder } from '../../../src/encode/otlp.js';
import { vendorBEncoder } from '../../../src/encode/vendors.js';
import { jsonEncoder } from '../../../src/encode/json.js';
import type { BatchEntry, EncodableBatch } from '../../../src/encode/encoder.js';
import { shapeRecord } from '../../../src/shape/delivered-record.js';
import { buildResource } from '../../../src/model/resource.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';
import { encodeExportLogsResponse } from '../../helpers/otlp-decoder.js';

const gzip = promisify(gzipCb);
const source = [...syntheticRecords(20, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_a', name: 'a' }] }], seed: 5 })];
const entryOf = (i: number): BatchEntry => {
  const record = shapeRecord(source[i]!, '2026-11-23T10:00:00Z', { includeContent: true, redact: null });
  return { id: record.id, record, json: JSON.stringify(record), scrubHits: 0 };
};
const resource = buildResource(source[0]!, undefined);
const batchOf = (entries: BatchEntry[], batchId = '01JC0000000000000000000000', res = resource): EncodableBatch => ({ batchId, resource: res, resourceJson: JSON.stringify(res), entries });

describe('sharedEncoding', () => {
  const entries = source.map((_, i) => entryOf(i));

  it('returns the same body for another drain batch of the same entry objects, whatever its batch id', () => {
    const shared = sharedEncoding(otlpEncoder);
    const first = shared.encode(batchOf(entries.slice(0, 10), '01JCAAAAAAAAAAAAAAAAAAAAAA'));
    const second = shared.encode(batchOf([...entries.slice(0, 10)], '01JCBBBBBBBBBBBBBBBBBBBBBB'));
    expect(second).toBe(first);
    expect(first).toEqual(otlpEncoder.encode(batchOf(entries.slice(0, 10))));
  });

  it('encodes afresh when entries differ by identity, order, count or resource', () => {
    const shared = sharedEncoding(vendorBEncoder);
    const base = entries.slice(0, 5);
    const body = shared.encode(batchOf(base));
    const equalCopy = [base[0]!, { ...base[1]! }, ...base.slice(2)];
    const copied = shared.encode(batchOf(equalCopy));
    expect(copied).not.toBe(body);
    expect(copied).toEqual(body);
    // The first body is still known after a miss.
    expect(shared.encode(batchOf([...base]))).toBe(body);
    const swapped = shared.encode(batchOf([base[0]!, base[2]!, base[1]!, base[3]!, base[4]!]));
    expect(swapped).not.toEqual(body);
    expect(shared.encode(batchOf(base.slice(0, 4)))).not.toEqual(body);
    const otherResource = { ...resource, 'cloud.region': 'eu-west-1' };
    const other = shared.encode(batchOf(base, undefined, otherResource));
    expect(other.toString()).toContain('eu-west-1');
    expect(body.toString()).not.toContain('eu-west-1');
  });

  it('keeps the content type and reading of OTLP partial success', () => {
    const shared = sharedEncoding(otlpEncoder);
    expect(shared.contentType).toBe('application/x-protobuf');
    expect(shared.rejectedRecords!(encodeExportLogsResponse({ rejectedLogRecords: 2 }), 'application/x-protobuf')).toBe(2);
  });
});

describe('gzipOnce', () => {
  it('compresses one body object once per level, other bodies separately', async () => {
    const body = otlpEncoder.encode(batchOf(source.map((_, i) => entryOf(i))));
    const a = await gzipOnce(body, 1, gzip);
    expect(await gzipOnce(body, 1, gzip)).toBe(a);
    expect(gunzipSync(a)).toEqual(body);
    const level6 = await gzipOnce(body, 6, gzip);
    expect(level6).not.toBe(a);
    expect(gunzipSync(level6)).toEqual(body);
    const copy = Buffer.from(body);
    expect(await gzipOnce(copy, 1, gzip)).not.toBe(a);
  });
});

describe('json bodies spliced around shared records', () => {
  const entries = source.map((_, i) => entryOf(i));

  it('gzips to a valid stream that any gunzip reads back as the exact body, at any level and size', async () => {
    const unicode = { ...entries[0]!, json: JSON.stringify({ ...entries[0]!.record, body: 'héllo 😀 日本語'.repeat(50) }) };
    for (const level of [1, 6, 9]) {
      for (const es of [[], [entries[0]!], entries, [unicode, ...entries]]) {
        const body = jsonEncoder.encode(batchOf(es, `01JC${String(level).padStart(22, '0')}`));
        expect(JSON.parse(body.toString()).records).toHaveLength(es.length);
        const gz = await gzipOnce(body, level, gzip);
        expect(gunzipSync(gz)).toEqual(body);
      }
    }
    const many = Array.from({ length: 2000 }, (_, i) => entries[i % entries.length]!);
    const big = jsonEncoder.encode(batchOf(many));
    expect(gunzipSync(await gzipOnce(big, 1, gzip))).toEqual(big);
  });

  it('two drains batch ids apart: different bodies, one compression of their records', async () => {
    const es = entries.slice(0, 12);
    const a = jsonEncoder.encode(batchOf(es, '01JCAAAAAAAAAAAAAAAAAAAAAA'));
    const b = jsonEncoder.encode(batchOf([...es], '01JCBBBBBBBBBBBBBBBBBBBBBB'));
    expect(JSON.parse(a.toString()).batchId).toBe('01JCAAAAAAAAAAAAAAAAAAAAAA');
    expect(JSON.parse(b.toString()).batchId).toBe('01JCBBBBBBBBBBBBBBBBBBBBBB');
    expect(JSON.parse(a.toString()).records).toEqual(JSON.parse(b.toString()).records);
    const [ga, gb] = [await gzipOnce(a, 1, gzip), await gzipOnce(b, 1, gzip)];
    expect(gunzipSync(ga)).toEqual(a);
    expect(gunzipSync(gb)).toEqual(b);
    const middle = deflateRawSync(Buffer.from(es.map((e) => e.json).join(',')), { level: 1, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    expect(ga.indexOf(middle)).toBeGreaterThan(0);
    expect(gb.indexOf(middle)).toBeGreaterThan(0);
  });
});
