import { describe, expect, it } from 'vitest';
import { BUCKETS, bucketOf, pageOf, placeOf, readCut, recordKey } from '../../../src/modules/drains/tables/backlog-pages.js';

const pages = (...buckets: [bucket: number, records: number][]) => buckets.map(([bucket, records]) => ({ bucket, records }));

describe('readCut', () => {
  it('leaves the last bucket of a read holding several for the next read, when it runs on past the budget', () => {
    // a: 3 + 2, b: 4 then more of b beyond the budget of 10.
    expect(readCut(pages([1, 3], [1, 2], [2, 4], [2, 5]), 10)).toBe(2);
  });

  it('takes a bucket that ends within the read whole, and a last bucket when nothing of it follows', () => {
    expect(readCut(pages([1, 3], [2, 4], [3, 5]), 8)).toBe(2);
    expect(readCut(pages([1, 3], [2, 4]), 10)).toBe(2);
    expect(readCut([], 10)).toBe(0);
  });

  it('takes its first bucket whole up to the cap, more buckets only up to the budget', () => {
    expect(readCut(pages([1, 6], [1, 6], [1, 6], [2, 1]), 10, 20)).toBe(3);
    expect(readCut(pages([1, 6], [1, 6], [2, 3], [3, 1]), 10, 20)).toBe(2);
    expect(readCut(pages([1, 6], [1, 6], [1, 6], [1, 6]), 10, 20)).toBe(3);
  });

  it('reads a bucket over the budget in parts, at least a page at a time', () => {
    expect(readCut(pages([1, 6], [1, 6], [1, 6]), 10)).toBe(1);
    expect(readCut(pages([1, 20], [2, 1]), 10)).toBe(1);
  });
});

describe('backlog pages', () => {
  it('puts a resource always in the same bucket, the records of many spread over all', () => {
    expect(bucketOf('{"agent.id":"agt_1"}')).toBe(bucketOf('{"agent.id":"agt_1"}'));
    const seen = new Set(Array.from({ length: 10_000 }, (_, i) => bucketOf(`{"agent.id":"agt_${i}"}`)));
    expect(seen.size).toBe(BUCKETS);
    expect([...seen].every((b) => b >= 0 && b < BUCKETS)).toBe(true);
  });

  it('names a record by its page and place', () => {
    const id = recordKey(123_456_789, 500);
    expect(pageOf(id)).toBe(123_456_789);
    expect(placeOf(id)).toBe(500);
    expect(placeOf(recordKey(7, 1))).toBe(1);
  });
});
