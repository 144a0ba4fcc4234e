/**
 * Small bodies are gzipped with a window and hash table sized to them: the output must be
 * ordinary gzip any decoder takes, and compress as well as zlib's defaults.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipBody, smallBodyGzip } from '../../../src/encode/compression.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

const ORGS = [{ orgId: 'org_1', agents: [{ id: 'agt_1', name: 'one' }, { id: 'agt_2', name: 'two' }] }];
const ndjson = (n: number) => Buffer.from([...syntheticRecords(n, { orgs: ORGS, seed: n })].map((r) => `${JSON.stringify(r)}\n`).join(''));

describe('gzip of small bodies', () => {
  it('keeps the whole body within the window, up to the default window', () => {
    for (const size of [1, 100, 761, 762, 1_000, 5_000, 16_000, 32_506, 40_000, 64_000]) {
      const { windowBits, memLevel } = smallBodyGzip(size, 1);
      expect(windowBits).toBeGreaterThanOrEqual(10);
      expect(windowBits).toBeLessThanOrEqual(15);
      expect(memLevel).toBeGreaterThanOrEqual(1);
      expect(memLevel).toBeLessThanOrEqual(8);
      // deflate reaches back at most the window less 262 bytes
      if (size + 262 <= 2 ** 15) expect(2 ** windowBits).toBeGreaterThanOrEqual(size + 262);
      else expect(windowBits).toBe(15);
    }
  });

  it('gives gzip that decodes to the body, no larger than with the defaults', () => {
    for (const n of [1, 2, 3, 10, 40, 100]) {
      const body = ndjson(n);
      const small = gzipSync(body, smallBodyGzip(body.length, 1));
      expect(gunzipSync(small).equals(body)).toBe(true);
      expect(small.length).toBeLessThanOrEqual(Math.ceil(gzipSync(body, { level: 1 }).length * 1.02));
    }
  });

  it("holds the gzip in a buffer sized to the body, not zlib's 16 KB: it lives as long as its request", async () => {
    for (const n of [1, 2, 3, 10]) {
      const body = ndjson(n);
      const gz = await gzipBody(body, { level: 1 });
      expect(gunzipSync(gz).equals(body)).toBe(true);
      // What the gzip keeps alive is the buffer under it (a small one may share Node's 8 KB slab).
      expect(gz.buffer.byteLength).toBeLessThanOrEqual(Math.max(8 * 1024, body.length));
    }
  });

  it('still gives the whole gzip of a body that does not compress into its buffer', () => {
    for (const size of [2_000, 8_000, 30_000]) {
      const body = randomBytes(size);
      const gz = gzipSync(body, smallBodyGzip(size, 1));
      expect(gz.length).toBeGreaterThan(smallBodyGzip(size, 1).chunkSize);
      expect(gunzipSync(gz).equals(body)).toBe(true);
    }
  });
});
