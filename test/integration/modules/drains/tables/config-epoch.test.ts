/**
 * The drain configuration counter (store/change-epochs.ts) on both stores: a unit of work that
 * writes no drain (a family's: organizations, audit entries, its own rows) leaves it where it was,
 * so the API's drain read cache keeps its entries; one that writes a drain moves it after the
 * statement and again once it commits (a read made between the two saw the old rows), and a rolled
 * back one moves it no further than its statement did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../../../helpers/stores.js';
import type { Store } from '../../../../../src/store/store.js';
import type { Drain } from '../../../../../src/model/drain.js';
import { drainConfigEpoch } from '../../../../../src/store/change-epochs.js';
import { bindDrainTables } from '../../../../../src/modules/drains/tables/index.js';

const ACTOR = { type: 'user' as const, id: 'usr_epoch' };
let n = 0;

function drain(): Drain {
  const now = new Date();
  const id = `drn_epoch_${Date.now()}_${++n}`;
  return {
    id, orgId: 'org_epoch', name: id, type: 'http', endpoint: 'https://example.com/logs', site: null, format: 'json',
    headers: [], secret: null, previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null,
    selectors: { sources: null, minSeverity: 'info', agents: '*', environments: ['production'], includeContent: false },
    sampling: null, redact: null, scrubRules: null, state: 'pending_verification', pauseReason: null,
    verifiedAt: null, verification: null, version: 1, createdBy: ACTOR, createdAt: now, updatedAt: now,
  };
}

const entry = (targetId: string) => ({ orgId: 'org_epoch', action: 'test.epoch', actor: ACTOR, targetType: 'test', targetId, details: {} });

describe.each(STORE_KINDS)('the drain configuration counter on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose());

  it('does not move for a family unit of work that writes no drain', async () => {
    const before = drainConfigEpoch();
    await store.kernel.unitOfWork(async (tx) => {
      const org = await tx.tenancy.createOrg({ name: `epoch ${++n}` });
      await tx.audit(entry(org.id));
      await tx.sql.query("insert into settings (name, value) values ($1, 'x')", [`epoch_${Date.now()}_${n}`]);
    });
    // The whole store's unit of work, the drain tables bound but not written, moves nothing either.
    await store.unitOfWork(async (tx) => {
      await tx.drains.listByOrg('org_epoch');
      await tx.audit(entry('none'));
    });
    expect(drainConfigEpoch()).toBe(before);
  });

  it('moves after a drain write in a family unit of work, and again once it commits', async () => {
    const d = drain();
    const before = drainConfigEpoch();
    let afterStatement = -1;
    await store.kernel.unitOfWork(async (tx) => {
      await bindDrainTables(tx).drains.insert(d);
      afterStatement = drainConfigEpoch();
      await tx.audit(entry(d.id));
    });
    expect(afterStatement).toBeGreaterThan(before);
    expect(drainConfigEpoch()).toBeGreaterThan(afterStatement);
    expect(await store.drains.get(d.orgId, d.id)).toMatchObject({ id: d.id });
  });

  it('moves once per committed unit however many drains it wrote, and not after a rollback', async () => {
    const [a, b] = [drain(), drain()];
    let afterStatements = -1;
    await store.unitOfWork(async (tx) => {
      await tx.drains.insert(a);
      await tx.drains.insert(b);
      afterStatements = drainConfigEpoch();
    });
    expect(drainConfigEpoch()).toBe(afterStatements + 1);

    const c = drain();
    let rolledBack = -1;
    await expect(store.unitOfWork(async (tx) => {
      await tx.drains.insert(c);
      rolledBack = drainConfigEpoch();
      throw new Error('late failure');
    })).rejects.toThrow('late failure');
    expect(drainConfigEpoch()).toBe(rolledBack);
    expect(await store.drains.get(c.orgId, c.id)).toBeUndefined();
  });
});
