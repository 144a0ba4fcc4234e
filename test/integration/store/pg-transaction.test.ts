/**
 * Transactions whose BEGIN travels with their first statement and whose COMMIT travels with their
 * last (sql.ts, pg-transaction.ts), on both stores: the first statement runs inside the
 * transaction (another connection does not see it before the commit, and a failure later undoes
 * it), a statement that carries the COMMIT has committed once it resolves, a statement that fails
 * with the COMMIT behind it leaves nothing committed, and the connection serves the next
 * transaction either way. A unit of work's audit entry is written that way: its failure rolls
 * the unit back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import { createUnitOfWork } from '../../../src/store/unit-of-work.js';

const ACTOR = { type: 'user', id: 'usr_tx' };
let n = 0;
const key = () => `k_${Date.now()}_${++n}`;

describe.each(STORE_KINDS)('transactions carrying BEGIN and COMMIT on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
    await store.sql.exec('create table tx_probe (k text primary key, v int not null)');
  });
  afterAll(async () => dispose());

  const valueOf = async (k: string): Promise<number | undefined> =>
    (await store.sql.query<{ v: number }>('select v from tx_probe where k = $1', [k]))[0]?.v;
  const insert = 'insert into tx_probe (k, v) values ($1, $2)';

  it('runs the first statement inside the transaction: a later failure undoes it', async () => {
    const k = key();
    await expect(store.sql.transaction(async (tx) => {
      await tx.query(insert, [k, 1]);
      if (kind.name === 'postgres') expect(await valueOf(k)).toBeUndefined();
      throw new Error('late failure');
    })).rejects.toThrow('late failure');
    expect(await valueOf(k)).toBeUndefined();
  });

  it('runs a prepared first statement inside the transaction, before and after its name is parsed on the connection', async () => {
    for (let i = 0; i < 6; i++) {
      const k = key();
      await expect(store.sql.transaction(async (tx) => {
        await tx.query(insert, [k, i], { prepare: 'tx-probe-insert' });
        throw new Error('undo');
      })).rejects.toThrow('undo');
      expect(await valueOf(k)).toBeUndefined();
      await store.sql.transaction((tx) => tx.query(insert, [k, i], { prepare: 'tx-probe-insert' }));
      expect(await valueOf(k)).toBe(i);
    }
  });

  it('commits with the last statement', async () => {
    const k = key();
    await store.sql.transaction(async (tx) => {
      await tx.query(insert, [k, 1]);
      await tx.queryThenCommit('update tx_probe set v = v + 1 where k = $1', [k]);
    });
    expect(await valueOf(k)).toBe(2);
  });

  if (kind.name === 'postgres') {
    it('has committed once the statement carrying the COMMIT resolves, and refuses a statement after it', async () => {
      const k = key();
      await expect(store.sql.transaction(async (tx) => {
        await tx.query(insert, [k, 1]);
        await tx.queryThenCommit('update tx_probe set v = v + 1 where k = $1', [k]);
        // Another connection sees it before the transaction's function has returned.
        expect(await valueOf(k)).toBe(2);
        await expect(tx.query('select 1 where $1::int = 1', [1])).rejects.toThrow('committed');
        throw new Error('after the commit');
      })).rejects.toThrow('after the commit');
      expect(await valueOf(k)).toBe(2);
    });
  }

  it('commits nothing when the statement carrying the COMMIT fails, and the connections serve the next transactions', async () => {
    const k = key();
    await store.sql.query(insert, [k, 1]);
    const other = key();
    await expect(store.sql.transaction(async (tx) => {
      await tx.query(insert, [other, 1]);
      await tx.queryThenCommit(insert, [k, 2]);
    })).rejects.toMatchObject({ code: '23505' });
    expect(await valueOf(other)).toBeUndefined();
    // A lone statement carrying both BEGIN and COMMIT, failing, then the same connections again.
    await expect(store.sql.transaction((tx) => tx.queryThenCommit(insert, [k, 3]))).rejects.toMatchObject({ code: '23505' });
    for (let i = 0; i < 8; i++) {
      const next = key();
      await store.sql.transaction((tx) => tx.queryThenCommit(insert, [next, i]));
      expect(await valueOf(next)).toBe(i);
    }
  });

  it('rolls back when the first statement fails, and the connections serve the next transactions', async () => {
    const k = key();
    await store.sql.query(insert, [k, 1]);
    for (let i = 0; i < 6; i++) {
      await expect(store.sql.transaction(async (tx) => {
        await tx.query(insert, [k, 2]);
      })).rejects.toMatchObject({ code: '23505' });
    }
    const next = key();
    await store.sql.transaction(async (tx) => {
      await tx.query(insert, [next, 1]);
      await tx.query('update tx_probe set v = 5 where k = $1', [next]);
    });
    expect(await valueOf(next)).toBe(5);
  });

  it('runs statements without parameters in the transaction too', async () => {
    const k = `k_plain_${Date.now()}`;
    await expect(store.sql.transaction(async (tx) => {
      await tx.query(`insert into tx_probe (k, v) values ('${k}', 1)`);
      throw new Error('undo');
    })).rejects.toThrow('undo');
    expect(await valueOf(k)).toBeUndefined();
    await store.sql.transaction((tx) => tx.queryThenCommit(`insert into tx_probe (k, v) values ('${k}', 2)`));
    expect(await valueOf(k)).toBe(2);
  });

  it('writes a unit of work\'s audit entries with its commit: one the table refuses rolls the unit back', async () => {
    const unitOfWork = createUnitOfWork(store.sql);
    const k = key();
    const taken = await unitOfWork((tx) => tx.audit({ orgId: 'org_tx', action: 'tx.probe', actor: ACTOR, targetType: 'probe', targetId: k, details: {} }));
    await expect(unitOfWork(async (tx) => {
      await tx.sql.query(insert, [k, 1]);
      await tx.audit({ orgId: 'org_tx', action: 'tx.probe', actor: ACTOR, targetType: 'probe', targetId: k, details: { n: 1 } });
      await tx.audit({ ...taken, details: { n: 2 } });
    })).rejects.toMatchObject({ code: '23505' });
    expect(await valueOf(k)).toBeUndefined();
    expect(await store.audit.page('org_tx', { targetId: k, limit: 10 })).toHaveLength(1);

    // Two entries and the mutation commit together; the unit's own read of the log sees its entries.
    await unitOfWork(async (tx) => {
      await tx.sql.query(insert, [k, 1]);
      await tx.audit({ orgId: 'org_tx', action: 'tx.probe.first', actor: ACTOR, targetType: 'probe', targetId: k, details: {} });
      expect((await tx.auditLog.page('org_tx', { targetId: k, limit: 10 })).map((e) => e.action).sort()).toEqual(['tx.probe', 'tx.probe.first']);
      await tx.audit({ orgId: 'org_tx', action: 'tx.probe.second', actor: ACTOR, targetType: 'probe', targetId: k, details: {} });
    });
    expect(await valueOf(k)).toBe(1);
    expect((await store.audit.page('org_tx', { targetId: k, limit: 10 })).map((e) => e.action).sort()).toEqual(['tx.probe', 'tx.probe.first', 'tx.probe.second']);
  });
});
