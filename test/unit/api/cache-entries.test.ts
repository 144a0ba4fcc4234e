/** The read caches' entries: when one answers, when it is read again, what is never kept. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cacheEntries, ENTRIES_MAX } from '../../../src/api/kernel/cache-entries.js';

describe('cache entries', () => {
  let local = 0;
  let remote = 0;
  const trust = { maxAgeMs: 1000, local: () => local, remote: () => remote };
  beforeEach(() => {
    local = 0;
    remote = 0;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  /** A read that counts its calls and answers the count. */
  const counting = () => {
    const calls = { n: 0 };
    return { calls, read: () => Promise.resolve(++calls.n) };
  };

  it('answers a trusted entry without reading, and shares one read between concurrent misses', async () => {
    const entries = cacheEntries<number>(trust);
    const { calls, read } = counting();
    const [a, b] = await Promise.all([entries.get('k', read), entries.get('k', read)]);
    expect([a, b, calls.n]).toEqual([1, 1, 1]);
    vi.setSystemTime(400);
    expect(await entries.get('k', read)).toBe(1);
    expect(calls.n).toBe(1);
    expect(await entries.get('other', read)).toBe(2);
  });

  it('reads again once a write of this process or a notification moved its counter', async () => {
    const entries = cacheEntries<number>(trust);
    const { calls, read } = counting();
    await entries.get('k', read);
    local++;
    expect(await entries.get('k', read)).toBe(2);
    remote++;
    expect(await entries.get('k', read)).toBe(3);
    expect(await entries.get('k', read)).toBe(3);
    expect(calls.n).toBe(3);
  });

  it('distrusts what a read returns when a write committed while it ran (counters taken before it)', async () => {
    const entries = cacheEntries<number>(trust);
    let n = 0;
    const racing = () => {
      n++;
      local++; // the write commits while the read runs
      return Promise.resolve(n);
    };
    expect(await entries.get('k', racing)).toBe(1);
    expect(await entries.get('k', racing)).toBe(2);
  });

  it('past half its age answers the entry and reads it again in the background; past its age it waits for a read', async () => {
    const entries = cacheEntries<number>(trust);
    const { calls, read } = counting();
    await entries.get('k', read);
    vi.setSystemTime(600);
    expect(await entries.get('k', read)).toBe(1);
    expect(calls.n).toBe(2);
    await Promise.resolve();
    expect(await entries.get('k', read)).toBe(2);
    expect(calls.n).toBe(2);
    vi.setSystemTime(1600);
    expect(await entries.get('k', read)).toBe(3);
  });

  it('keeps no failed read, and starts again past its entry bound', async () => {
    const entries = cacheEntries<number>(trust);
    await expect(entries.get('k', () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    const { calls, read } = counting();
    expect(await entries.get('k', read)).toBe(1);
    for (let i = 0; i < ENTRIES_MAX - 1; i++) await entries.get(`f${i}`, () => Promise.resolve(0));
    expect(await entries.get('k', read)).toBe(1);
    await entries.get('one more', () => Promise.resolve(0));
    expect(await entries.get('k', read)).toBe(2);
    expect(calls.n).toBe(2);
    entries.clear();
    expect(await entries.get('k', read)).toBe(3);
  });
});
