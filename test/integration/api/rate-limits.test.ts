/**
 * Spec 01 part 8 budgets with their default values, held across two API
 * processes sharing one Postgres database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';

describe('drain rate limits across API processes', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startApp({ DATABASE_URL: db.url }, 'serve');
    b = await startApp({ DATABASE_URL: db.url }, 'serve');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('shares the 60-a-minute mutation bucket of an organization between processes, then answers 429 with a bare Retry-After', async () => {
    // Start at the beginning of a minute window so the 61 requests fall in one.
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 50));
    const path = '/admin/orgs/org_acme/log-drains/drn_missing/pause';
    const remaining: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await (i % 2 === 0 ? a : b).request('POST', path, { token: 'lk_acme_manage' });
      expect(res.status).toBe(404); // counted, then the drain is unknown
      expect(res.headers.get('x-ratelimit-limit-log-drains-mutate')).toBe('60');
      remaining.push(Number(res.headers.get('x-ratelimit-remaining-log-drains-mutate')));
    }
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
    const over = await a.request('POST', path, { token: 'lk_acme_manage' });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ statusCode: 429, code: 'DRAIN_RATE_LIMITED' });
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(over.headers.get('x-ratelimit-remaining-log-drains-mutate')).toBe('0');
    // Another organization has its own bucket, and reads their own.
    expect((await b.request('POST', '/admin/orgs/org_globex/log-drains/drn_missing/pause', { token: 'lk_globex_manage' })).status).toBe(404);
    const read = await b.request('GET', '/admin/orgs/org_acme/log-drains', { token: 'lk_acme_manage' });
    expect(read.status).toBe(200);
    expect(read.headers.get('x-ratelimit-limit-log-drains-read')).toBe('300');
  });
});
