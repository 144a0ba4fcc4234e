/**
 * Two API processes on one Postgres database, for suites about what one process's writes do to the
 * other's caches: this test's app (`serve`), a second process of its own (serve-process.ts), and
 * read caches on the app's store. Called inside a describe: all start before its tests and stop
 * after them; the fields are set once started.
 */
import { afterAll, beforeAll } from 'vitest';
import { createReadCaches, type ReadCaches } from '../../src/api/kernel/read-cache.js';
import { startApp, type TestApp } from './app.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';

export interface TwoApis {
  db: TestDatabase;
  app: TestApp;
  other: ServeProcess;
  caches: ReadCaches;
}

export function twoApisOnOneDatabase(env: { app?: Record<string, string>; other: (db: TestDatabase) => Record<string, string> }): TwoApis {
  const apis = {} as TwoApis;
  beforeAll(async () => {
    apis.db = await createTestDatabase();
    apis.app = await startApp({ DATABASE_URL: apis.db.url, ...env.app }, 'serve');
    apis.other = await startServeProcess(env.other(apis.db));
    apis.caches = await createReadCaches(apis.app.store.sql);
  });
  afterAll(async () => {
    await apis.caches?.stop();
    await apis.other?.stop();
    await apis.app?.stop();
    await apis.db?.drop();
  });
  return apis;
}

/** A request to the second process as `token`, with a JSON body when given: its status and JSON answer. */
export async function requestOther(apis: TwoApis, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${apis.other.base}${path}`, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
