/**
 * The platform copy under hostile records, on PGlite and on Postgres: a copy
 * Postgres refuses for what it holds is dead-lettered alone while every other
 * organization's copies are written, the accountant reports a writer that
 * keeps failing, and one organization cannot pre-empt another's record by
 * sending its id and timestamp first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { STORE_KINDS } from '../../../helpers/stores.js';
import { record } from '../../../helpers/records.js';
import type { Store } from '../../../../src/store/store.js';
import { logCopyOf, type LogCopy } from '../../../../src/modules/logs/pages.js';
import { createAccountant, PLATFORM_COPY_SOURCE } from '../../../../src/account/accountant.js';
import { silentLogger } from '../../../../src/telemetry/logger.js';

const copyOf = (r: ReturnType<typeof record>): LogCopy => logCopyOf(r, JSON.stringify(r), Date.parse(r.timestamp));

describe.each(STORE_KINDS)('platform copy tenancy on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  it('stores records of two organizations sharing an id and a timestamp, each once', async () => {
    const ts = new Date().toISOString();
    const mine = record({ id: 'shared-id', orgId: 'org_tenant_a', timestamp: ts, message: 'a' });
    const theirs = record({ id: 'shared-id', orgId: 'org_tenant_b', timestamp: ts, message: 'b' });
    await store.logs.insert([theirs], 7);
    await store.logs.insert([mine, theirs], 7); // a re-read stays single
    const a = await store.logs.page({ orgId: 'org_tenant_a' }, 10);
    const b = await store.logs.page({ orgId: 'org_tenant_b' }, 10);
    expect(a.map((r) => [r.id, r.message])).toEqual([['shared-id', 'a']]);
    expect(b.map((r) => [r.id, r.message])).toEqual([['shared-id', 'b']]);
  });

  it('dead-letters a copy Postgres refuses on its own and writes every other organization\'s copies', async () => {
    const accountant = createAccountant({ store, logs: { repo: store.logs, retentionDays: 7 }, logger: silentLogger(), flushIntervalMs: 10 });
    const ts = new Date().toISOString();
    // Past the decoder's bounds (as a record written before them, or by another tool): its index row is too large.
    // Random text: Postgres compresses index entries, and a repeated character would fit compressed.
    const poison = record({ orgId: 'org_poison', agentId: randomBytes(50_000).toString('hex'), timestamp: ts });
    const others = Array.from({ length: 9 }, (_, i) => record({ orgId: `org_bystander_${i % 3}`, timestamp: ts }));
    const lettersBefore = await store.deadLetters.count();
    const all = [others[0]!, poison, ...others.slice(1)];
    await Promise.race([
      Promise.all(all.map((r) => accountant.record({ logs: [copyOf(r)] }))),
      new Promise((_, reject) => setTimeout(() => reject(new Error('the copies were never accounted for')), 20_000)),
    ]);
    for (const o of ['org_bystander_0', 'org_bystander_1', 'org_bystander_2']) expect((await store.logs.page({ orgId: o }, 10)).length).toBe(3);
    expect((await store.logs.page({ orgId: 'org_poison' }, 10)).length).toBe(0);
    expect(await store.deadLetters.count()).toBe(lettersBefore + 1);
    const [letter] = await store.deadLetters.recent(1);
    expect(letter!.source).toBe(PLATFORM_COPY_SOURCE);
    expect(letter!.reason).toMatch(/^platform copy refused: /);
    expect(accountant.healthy()).toBe(true);
    await accountant.stop();
  });

  it('reports itself unhealthy once writes have failed for its stuck time, healthy again once one succeeds', async () => {
    let failing = true;
    const repo = {
      ...store.logs,
      insertCopies: async (...args: Parameters<Store['logs']['insertCopies']>) => {
        if (failing) throw Object.assign(new Error('connection terminated'), { code: '08006' });
        return store.logs.insertCopies(...args);
      },
    } as Store['logs'];
    const accountant = createAccountant({ store, logs: { repo, retentionDays: 7 }, logger: silentLogger(), flushIntervalMs: 10, stuckAfterMs: 200 });
    const done = accountant.record({ logs: [copyOf(record({ orgId: 'org_stuck' }))] });
    await new Promise((r) => setTimeout(r, 400));
    expect(accountant.healthy()).toBe(false);
    failing = false;
    await done;
    expect(accountant.healthy()).toBe(true);
    await accountant.stop();
  });

  it('gives up the oldest copies held for another try past its bound, so a store that keeps refusing cannot grow it for ever', async () => {
    const repo = { ...store.logs, insertCopies: async () => Promise.reject(Object.assign(new Error('down'), { code: '57P01' })) } as unknown as Store['logs'];
    const accountant = createAccountant({ store, logs: { repo, retentionDays: 7 }, logger: silentLogger(), flushIntervalMs: 10, maxHeldCopies: 3 });
    const first = accountant.record({ logs: [copyOf(record()), copyOf(record())] });
    await new Promise((r) => setTimeout(r, 50));
    const second = accountant.record({ logs: [copyOf(record()), copyOf(record())] });
    // The first entry's copies are given up (its promise resolves) once four are held.
    await first;
    void second;
    await accountant.stop().catch(() => {});
  });
});
