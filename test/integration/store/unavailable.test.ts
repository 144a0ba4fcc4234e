/**
 * What counts as the store being unreachable: only errors the store's client raised. A refused
 * connection to Postgres does (through the store's connection, as openStore hands it out), whether a statement or a transaction's begin met it; an error of
 * the same look (ECONNRESET) thrown by the caller's own code, inside a transaction or not, does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { openSql, type Sql } from '../../../src/store/sql.js';
import { isStoreUnavailable, withStoreErrorsMarked } from '../../../src/store/unavailable.js';

const reset = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
const caught = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a rejection'); }, (e: unknown) => e);

describe('isStoreUnavailable', () => {
  let refused: Sql;
  let embedded: Sql;
  beforeAll(async () => {
    // A port nothing listens on: bound, then closed.
    const s = createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
    const port = (s.address() as AddressInfo).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    refused = withStoreErrorsMarked(await openSql({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/test`, maxConnections: 1 }));
    embedded = withStoreErrorsMarked(await openSql({ dataDir: 'memory://' }));
  });
  afterAll(async () => {
    await refused?.close();
    await embedded?.close();
  });

  it('takes a refused connection for the store being unreachable, from a statement or a transaction', async () => {
    expect(isStoreUnavailable(await caught(refused.query('select 1')))).toBe(true);
    expect(isStoreUnavailable(await caught(refused.transaction((tx) => tx.query('select 1'))))).toBe(true);
  });

  it('does not take an error of the same look from anywhere else', async () => {
    expect(isStoreUnavailable(reset())).toBe(false);
    expect(isStoreUnavailable(await caught(embedded.transaction(async () => { throw reset(); })))).toBe(false);
    expect(isStoreUnavailable(await caught(embedded.transaction(async (tx) => { await tx.query('select 1'); throw reset(); })))).toBe(false);
    // A statement the store refused is no outage either.
    expect(isStoreUnavailable(await caught(embedded.query('select * from no_such_table')))).toBe(false);
  });
});
