/**
 * The body pool (encode/body-pool.ts): memory of a body given back is handed out again, as a new
 * object, and only memory the pool itself handed out is ever taken back; what it keeps is bounded.
 * ndjson bodies built in reused memory are byte for byte those built in fresh memory.
 */
import { describe, expect, it } from 'vitest';
import { bodyPoolSize, recycleBodyBuffer, takeBodyBuffer } from '../../../src/encode/body-pool.js';
import { ndjsonEncoder } from '../../../src/encode/ndjson.js';
import { Utf8Builder } from '../../../src/encode/utf8-builder.js';
import { ShapedEntry } from '../../../src/encode/encoder.js';
import { shapeRecord } from '../../../src/shape/delivered-record.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';
import { buildResource } from '../../../src/model/resource.js';

const drain = () => {
  while (bodyPoolSize().buffers > 0) takeBodyBuffer(64 * 1024);
};

describe('the body pool', () => {
  it('hands memory given back out again, as a new object, and not twice before it is given back again', () => {
    drain();
    const a = takeBodyBuffer(300_000);
    expect(a.length).toBeGreaterThanOrEqual(300_000);
    const view = a.subarray(0, 1000);
    recycleBodyBuffer(view);
    expect(bodyPoolSize()).toEqual({ buffers: 1, bytes: a.buffer.byteLength });
    const b = takeBodyBuffer(200_000);
    expect(b.buffer).toBe(a.buffer);
    // The smallest buffer that fits is taken.
    recycleBodyBuffer(takeBodyBuffer(1_500_000));
    recycleBodyBuffer(b);
    expect(takeBodyBuffer(250_000).buffer).toBe(a.buffer);
    expect(b).not.toBe(a);
    const c = takeBodyBuffer(200_000);
    expect(c.buffer).not.toBe(a.buffer);
    drain();
    // Given back twice: kept once.
    recycleBodyBuffer(b);
    recycleBodyBuffer(b);
    expect(bodyPoolSize().buffers).toBe(1);
  });

  it("never takes back memory it did not hand out (Node's shared slabs above all), nor more than it keeps", () => {
    drain();
    recycleBodyBuffer(Buffer.from('small, from the shared slab'));
    recycleBodyBuffer(Buffer.allocUnsafe(500_000));
    // Small bodies are not pooled: they come from the shared slabs.
    recycleBodyBuffer(takeBodyBuffer(1000));
    expect(bodyPoolSize().buffers).toBe(0);
    const big = takeBodyBuffer(8 * 1024 * 1024);
    recycleBodyBuffer(big);
    expect(bodyPoolSize().buffers).toBe(0);
    const taken = Array.from({ length: 20 }, (_, i) => takeBodyBuffer(100_000 + i * 1000));
    for (const t of taken) recycleBodyBuffer(t);
    const kept = bodyPoolSize();
    expect(kept.buffers).toBe(8);
    // The larger ones are kept.
    expect(kept.bytes).toBe(taken.slice(12).reduce((n, t) => n + t.buffer.byteLength, 0));
  });

  it('gives a pooled builder that grows its old memory back, and the text is what a fresh builder writes', () => {
    drain();
    const pooled = new Utf8Builder(10, true);
    const fresh = new Utf8Builder(10);
    for (let i = 0; i < 5000; i++) {
      const s = `{"n":${i},"t":"ключ ✓ ${'x'.repeat(i % 50)}"}`;
      pooled.stringWithFirstByte(s, 0x2c);
      fresh.stringWithFirstByte(s, 0x2c);
      pooled.byte(0x0a);
      fresh.byte(0x0a);
    }
    expect(pooled.finish().equals(fresh.finish())).toBe(true);
    expect(bodyPoolSize().buffers).toBeGreaterThan(0);
  });

  it('builds ndjson bodies in reused memory byte for byte as in fresh memory', () => {
    const orgs = [{ orgId: 'org_1', agents: [{ id: 'agt_1', name: 'one' }] }];
    const batchOf = (seed: number, n: number) => {
      const records = [...syntheticRecords(n, { orgs, seed })];
      return {
        batchId: `batch-${seed}`,
        resource: buildResource(records[0]!, undefined),
        resourceJson: JSON.stringify(buildResource(records[0]!, undefined)),
        entries: records.map((r) => new ShapedEntry(shapeRecord(r, r.timestamp, { includeContent: true, redact: null }), 0)),
      };
    };
    const expected = (b: ReturnType<typeof batchOf>) =>
      Buffer.from(b.entries.map((e) => `${JSON.stringify({ schemaUrl: 'https://schemas.svc.dev/log-drain/batch/1.0.json', batchId: b.batchId, resource: JSON.parse(b.resourceJson) as unknown, ...e.record })}\n`).join(''));
    for (let round = 0; round < 6; round++) {
      const batch = batchOf(round, 200 + round * 150);
      const body = ndjsonEncoder.encode(batch);
      expect(body.equals(expected(batch))).toBe(true);
      ndjsonEncoder.recycle!(body);
    }
  });
});
