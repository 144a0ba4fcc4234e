/**
 * The rate-limit windows on both stores (src/store/rate-limits-repo.ts): hits of many windows at
 * once are written in a few statements, each answered with its own window's count; two hits of one
 * window in one statement both count; a statement the store refuses fails each of its hits once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import type { Sql } from '../../../src/store/sql.js';
import { createRateLimitsRepo } from '../../../src/store/rate-limits-repo.js';

const WINDOW_MS = 60_000;
const NOW = Date.UTC(2026, 0, 1, 12, 0, 30);
let n = 0;
/** A bucket no other test uses. */
const freshBucket = () => `bucket-${++n}`;

/** `sql` with its statements counted, refusing those `refuse` picks. */
function counted(sql: Sql, refuse: (text: string) => boolean = () => false): { sql: Sql; statements: string[] } {
  const statements: string[] = [];
  const query: Sql['query'] = (text, params, options) => {
    statements.push(text);
    return refuse(text) ? Promise.reject(new Error('refused by the test')) : sql.query(text, params, options);
  };
  return { sql: { ...sql, query }, statements };
}

describe.each(STORE_KINDS)('rate-limit windows on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose());

  it('writes the hits of many windows at once in a few statements, each answered with its own count', async () => {
    const { sql, statements } = counted(store.sql);
    const repo = createRateLimitsRepo(sql);
    const bucket = freshBucket();
    // Forty subjects, the i-th hit i + 1 times in one call.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => repo.hit(bucket, `10.0.0.${i}`, WINDOW_MS, NOW, i + 1)));
    expect(answers.map((a) => a.hits)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(new Set(answers.map((a) => a.windowStartMs))).toEqual(new Set([Math.floor(NOW / WINDOW_MS) * WINDOW_MS]));
    expect(statements.length).toBeLessThanOrEqual(8);
    // The counts are the store's: the next hit of each adds to them.
    expect((await repo.hit(bucket, '10.0.0.39', WINDOW_MS, NOW)).hits).toBe(41);
    expect((await repo.hit(bucket, '10.0.0.0', WINDOW_MS, NOW, 0)).hits).toBe(1);
  });

  it('counts two hits of one window in one statement, and answers both with the window\'s count', async () => {
    const repo = createRateLimitsRepo(store.sql);
    const bucket = freshBucket();
    // The first call of each lane (one embedded, four on Postgres, taken in turn) runs alone; the
    // ones after it wait, and go together: the two of `same` are four calls apart, in one lane.
    const first = Array.from({ length: 4 }, (_, i) => repo.hit(bucket, `first-${i}`, WINDOW_MS, NOW));
    const twice = [
      repo.hit(bucket, 'same', WINDOW_MS, NOW, 2),
      ...[1, 2, 3].map((i) => repo.hit(bucket, `other-${i}`, WINDOW_MS, NOW)),
      repo.hit(bucket, 'same', WINDOW_MS, NOW, 3),
    ];
    await Promise.all(first);
    const answers = await Promise.all(twice);
    const [a, b] = [answers[0], answers[4]];
    expect(Math.max(a!.hits, b!.hits)).toBe(5);
    expect((await repo.hit(bucket, 'same', WINDOW_MS, NOW, 0)).hits).toBe(5);
  });

  it('fails each hit of a statement the store refuses, once, and counts none of them', async () => {
    const { sql, statements } = counted(store.sql, (text) => text.includes('unnest'));
    const repo = createRateLimitsRepo(sql);
    const bucket = freshBucket();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => repo.hit(bucket, `s${i}`, WINDOW_MS, NOW)));
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) expect((o as PromiseRejectedResult).reason.message).toBe('refused by the test');
    // No hit is tried again alone: the refused ones cost one statement for all of their batch.
    expect(statements.length).toBeLessThanOrEqual(8);
    const plain = createRateLimitsRepo(store.sql);
    for (let i = 0; i < 20; i++) {
      const expected = outcomes[i]!.status === 'fulfilled' ? 1 : 0;
      expect((await plain.hit(bucket, `s${i}`, WINDOW_MS, NOW, 0)).hits, `s${i}`).toBe(expected);
    }
  });
});
