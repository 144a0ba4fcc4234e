/**
 * A fresh Postgres database per test file on the machine's server
 * (127.0.0.1:5432, trust auth), dropped afterwards.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** `adminUrl`: the server's database to create it from (benchmarks name their own server). */
export async function createTestDatabase(adminUrl = POSTGRES_ADMIN_URL, prefix = 'logdrain_t'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
