/**
 * store.unitOfWork on both stores: a drain mutation and its audit entry
 * commit together, and a failed audit write (a row the table refuses, or a
 * writer that throws) rolls the mutation back, configuration version included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import type { Drain } from '../../../src/model/drain.js';
import { createDrainUnitOfWork as createUnitOfWork } from '../../../src/modules/drains/tables/index.js';
import { auditDrain, drainAuditEntry } from '../../../src/audit/drain-audit.js';

const ACTOR = { type: 'user' as const, id: 'usr_ann' };
let n = 0;

function drain(): Drain {
  const now = new Date();
  const id = `drn_uow_${Date.now()}_${++n}`;
  return {
    id, orgId: 'org_uow', name: id, type: 'http', endpoint: 'https://example.com/logs', site: null, format: 'json',
    headers: [], secret: null, previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null,
    selectors: { sources: null, minSeverity: 'info', agents: '*', environments: ['production'], includeContent: false },
    sampling: null, redact: null, scrubRules: null, state: 'pending_verification', pauseReason: null,
    verifiedAt: null, verification: null, version: 1, createdBy: ACTOR, createdAt: now, updatedAt: now,
  };
}

describe.each(STORE_KINDS)('unit of work on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose());

  const entriesFor = async (drainId: string) => store.audit.page('org_uow', { targetId: drainId, limit: 100 });

  it('commits a mutation and its audit entry together, and returns what fn returns', async () => {
    const d = drain();
    await store.drains.insert(d);
    const updated = await store.unitOfWork(async (tx) => {
      const u = await tx.drains.update(d.orgId, d.id, { name: 'renamed' }, true);
      await auditDrain(tx, ACTOR, 'logs.drain.updated', u!, { changed: ['name'] });
      // Inside the transaction, its own writes are visible to its repositories.
      expect((await tx.drains.get(d.orgId, d.id))?.name).toBe('renamed');
      expect(await tx.auditLog.page('org_uow', { targetId: d.id, limit: 10 })).toHaveLength(1);
      return u;
    });
    expect(updated).toMatchObject({ name: 'renamed', version: 2 });
    expect((await store.drains.get(d.orgId, d.id))?.name).toBe('renamed');
    const entries = await entriesFor(d.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'logs.drain.updated', actor: ACTOR, targetType: 'log_drain', details: { name: 'renamed', changed: ['name'] } });
    expect(entries[0]!.id).toMatch(/^[0-9A-Z]{26}$/);
  });

  it('rolls the mutation back when the audit table refuses the entry (a taken id)', async () => {
    const d = drain();
    await store.drains.insert(d);
    const taken = await store.unitOfWork((tx) => tx.audit({ ...drainAuditEntry(ACTOR, 'logs.drain.created', d) }));
    const version = await store.drains.configVersion();
    await expect(store.unitOfWork(async (tx) => {
      await tx.drains.update(d.orgId, d.id, { name: 'never', site: 'never' }, true);
      await tx.audit({ ...drainAuditEntry(ACTOR, 'logs.drain.updated', d), id: taken.id });
    })).rejects.toMatchObject({ code: '23505' });
    expect(await store.drains.get(d.orgId, d.id)).toMatchObject({ name: d.name, state: 'pending_verification', version: 1 });
    // The configuration version the drain write moved (migration 008) rolled back with it.
    expect(await store.drains.configVersion()).toBe(version);
    expect((await entriesFor(d.id)).map((e) => e.action)).toEqual(['logs.drain.created']);
  });

  it('rolls the mutation back when the audit writer throws after it, and a soft delete with it', async () => {
    const d = drain();
    await store.drains.insert(d);
    const failing = createUnitOfWork(store.sql, async () => {
      throw new Error('audit unavailable');
    });
    await expect(failing(async (tx) => {
      expect(await tx.drains.softDelete(d.orgId, d.id)).toBe(true);
      await auditDrain(tx, ACTOR, 'logs.drain.deleted', d);
    })).rejects.toThrow('audit unavailable');
    expect(await store.drains.get(d.orgId, d.id)).toMatchObject({ id: d.id, name: d.name });
    expect(await entriesFor(d.id)).toEqual([]);
    // The store's own unit of work, with the real writer, still commits.
    await store.unitOfWork(async (tx) => {
      await tx.drains.softDelete(d.orgId, d.id);
      await auditDrain(tx, ACTOR, 'logs.drain.deleted', d);
    });
    expect(await store.drains.get(d.orgId, d.id)).toBeUndefined();
    expect((await entriesFor(d.id)).map((e) => e.action)).toEqual(['logs.drain.deleted']);
  });

  it('rolls everything back when fn throws after the audit entry was written', async () => {
    const d = drain();
    await expect(store.unitOfWork(async (tx) => {
      await tx.drains.insert(d);
      await auditDrain(tx, ACTOR, 'logs.drain.created', d);
      throw new Error('late failure');
    })).rejects.toThrow('late failure');
    expect(await store.drains.get(d.orgId, d.id)).toBeUndefined();
    expect(await entriesFor(d.id)).toEqual([]);
  });
});
