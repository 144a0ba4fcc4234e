/**
 * Large bodies are gzipped on the thread pool with an output buffer sized to hold the whole
 * compressed batch: the data in one trip to the pool and the end of the stream in another, not a
 * trip per 16 KB of output. The output is ordinary gzip.
 */
import { createGzip, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipBody, largeBodyGzip } from '../../../src/encode/compression.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

const ORGS = [{ orgId: 'org_1', agents: [{ id: 'agt_1', name: 'one' }, { id: 'agt_2', name: 'two' }] }];
const ndjson = (n: number) => Buffer.from([...syntheticRecords(n, { orgs: ORGS, seed: n })].map((r) => `${JSON.stringify(r)}\n`).join(''));

/** The pieces a gzip stream with these options hands out for `body`: each one a trip to the thread pool. */
async function outputPieces(body: Buffer, opts: object): Promise<{ pieces: number; out: Buffer }> {
  const gz = createGzip(opts);
  const chunks: Buffer[] = [];
  gz.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => gz.on('end', resolve));
  gz.end(body);
  await ended;
  return { pieces: chunks.length, out: Buffer.concat(chunks) };
}

describe('gzip of large bodies', () => {
  it("compresses a batch of 1000 records in two output pieces (the data, then the end), where zlib's default takes a piece per 16 KB", async () => {
    const body = ndjson(1000);
    expect(body.length).toBeGreaterThan(256 * 1024);
    const ours = await outputPieces(body, largeBodyGzip(body.length, 1));
    const defaults = await outputPieces(body, { level: 1 });
    expect(ours.pieces).toBeLessThanOrEqual(2);
    expect(defaults.pieces).toBeGreaterThanOrEqual(Math.floor(ours.out.length / (16 * 1024)));
    expect(defaults.pieces).toBeGreaterThan(4);
    expect(gunzipSync(ours.out).equals(body)).toBe(true);
    expect(ours.out.length).toBe(gzipSync(body, { level: 1 }).length);
  });

  it('is what the deliverer compresses a large batch with: ordinary gzip of the body', async () => {
    const body = ndjson(1000);
    const out = await gzipBody(body, { level: 1 });
    expect(gunzipSync(out).equals(body)).toBe(true);
    expect(out.length).toBe(gzipSync(body, largeBodyGzip(body.length, 1)).length);
  });

  it('keeps the output buffer between 16 KB and 120 KB (under the allocator threshold for a mapping of its own) whatever the size', () => {
    expect(largeBodyGzip(64 * 1024, 1).chunkSize).toBe(16 * 1024);
    expect(largeBodyGzip(400_000, 6)).toEqual({ level: 6, chunkSize: 100_000 });
    expect(largeBodyGzip(64 * 1024 * 1024, 1).chunkSize).toBe(120 * 1024);
  });
});
