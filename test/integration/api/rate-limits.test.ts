/**
 * Spec 01 part 8 budgets with their default values, held across two API
 * processes sharing one Postgres database: exactly when every request
 * reconciles (RATE_LIMIT_SYNC_MS=0), and with the default batched counting
 * (each process exact for its own requests, the other's hits learnt at a
 * reconcile: src/api/kernel/rate-limit.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';

const PAUSE = '/admin/orgs/org_acme/log-drains/drn_missing/pause';
const remainingOf = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-remaining-log-drains-mutate'));

/** Starts at the beginning of a minute window so the requests of a test fall in one. */
async function intoFreshWindow(): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 50));
}

describe('drain rate limits across API processes, every request reconciled', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startApp({ DATABASE_URL: db.url, RATE_LIMIT_SYNC_MS: '0' }, 'serve');
    b = await startApp({ DATABASE_URL: db.url, RATE_LIMIT_SYNC_MS: '0' }, 'serve');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('shares the 60-a-minute mutation bucket of an organization between processes, then answers 429 with a bare Retry-After', async () => {
    await intoFreshWindow();
    const remaining: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await (i % 2 === 0 ? a : b).request('POST', PAUSE, { token: 'lk_acme_manage' });
      expect(res.status).toBe(404); // counted, then the drain is unknown
      expect(res.headers.get('x-ratelimit-limit-log-drains-mutate')).toBe('60');
      remaining.push(remainingOf(res));
    }
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
    const over = await a.request('POST', PAUSE, { token: 'lk_acme_manage' });
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

describe('drain rate limits across API processes, counted in batches (the default)', () => {
  const SYNC_MS = 100;
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let sql: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startApp({ DATABASE_URL: db.url, RATE_LIMIT_SYNC_MS: String(SYNC_MS) }, 'serve');
    b = await startApp({ DATABASE_URL: db.url, RATE_LIMIT_SYNC_MS: String(SYNC_MS) }, 'serve');
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  const stored = async (): Promise<number> => {
    const { rows } = await sql.query<{ hits: number }>("select coalesce(sum(hits), 0)::int as hits from rate_limit_windows where bucket = 'log-drains-mutate' and subject = 'org_acme'");
    return rows[0]!.hits;
  };

  it('is exact within a process, and two processes reach the shared limit', async () => {
    await intoFreshWindow();
    // One process alone: exact budget headers, request by request.
    const first: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await a.request('POST', PAUSE, { token: 'lk_acme_manage' });
      expect(res.status).toBe(404);
      first.push(remainingOf(res));
    }
    expect(first).toEqual(Array.from({ length: 40 }, (_, i) => 59 - i));
    // Its hits reach the shared window without a request asking (the reconcile after SYNC_MS at most).
    await waitFor(async () => (await stored()) === 40, { what: "a's 40 hits in the shared window" });

    // The other process starts from the shared count: its first request of the window reconciles.
    const second: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await b.request('POST', PAUSE, { token: 'lk_acme_manage' });
      expect(res.status).toBe(404);
      second.push(remainingOf(res));
    }
    expect(second).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i));
    const overB = await b.request('POST', PAUSE, { token: 'lk_acme_manage' });
    expect(overB.status).toBe(429);
    expect(overB.body).toMatchObject({ code: 'DRAIN_RATE_LIMITED' });
    await waitFor(async () => (await stored()) === 61, { what: "b's 21 hits in the shared window" });

    // The first process last reconciled before b counted. Once its count is older than
    // RATE_LIMIT_SYNC_MS (the documented bound on what it may not know yet), its next request
    // reconciles before it is decided, and finds the bucket spent.
    await new Promise((r) => setTimeout(r, SYNC_MS + 20));
    const overA = await a.request('POST', PAUSE, { token: 'lk_acme_manage' });
    expect(overA.status).toBe(429);
    expect(overA.headers.get('x-ratelimit-remaining-log-drains-mutate')).toBe('0');
    expect(Number(overA.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});
