/**
 * moveDrain on both stores: the move is conditional on the state it read (a
 * move that lost a race writes nothing and says so), an event that does not
 * move the drain is refused as a value with a code, and the move and its audit
 * entry commit in one transaction, naming a typed API key as `api_key`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import type { Drain } from '../../../src/model/drain.js';
import { createDrainUnitOfWork as createUnitOfWork } from '../../../src/modules/drains/tables/index.js';
import { moveDrain, moveDrainAsItIs, MOVE_REFUSALS } from '../../../src/drains/move.js';
import { applyQuotaLevel } from '../../../src/drains/quota.js';
import { AppError } from '../../../src/errors.js';

const USER = { type: 'user' as const, id: 'usr_ann' };
const KEY = { type: 'api_key' as const, id: 'key_0123456789abcdef' };
const ORG = 'org_moves';
let n = 0;

function drain(over: Partial<Drain> = {}): Drain {
  const now = new Date();
  const id = `drn_move_${Date.now()}_${++n}`;
  return {
    id, orgId: ORG, name: id, type: 'http', endpoint: 'https://example.com/logs', site: null, format: 'json',
    headers: [], secret: null, previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null,
    selectors: { sources: null, minSeverity: 'info', agents: '*', environments: ['production'], includeContent: false },
    sampling: null, redact: null, scrubRules: null, state: 'pending_verification', pauseReason: null,
    verifiedAt: null, verification: null, version: 1, createdBy: USER, createdAt: now, updatedAt: now, ...over,
  };
}

describe.each(STORE_KINDS)('moveDrain on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose());

  const entriesFor = async (drainId: string) => store.audit.page(ORG, { targetId: drainId, limit: 100 });
  /** A drain stored in `state` (set from outside the service), as a read of it answers. */
  async function stored(state: Drain['state'], pauseReason: string | null = null): Promise<Drain> {
    const d = drain();
    await store.drains.insert(d);
    await store.drains.transition(d.id, ['pending_verification'], state, pauseReason);
    return (await store.drains.get(ORG, d.id))!;
  }

  it('moves the drain, and records the move with the actor in the same transaction', async () => {
    const d = await stored('healthy');
    const result = await store.unitOfWork(async (tx) => {
      const r = await moveDrain(tx, d, 'paused_manually', KEY, { reason: 'maintenance' });
      // Both written by now, inside the transaction.
      expect((await tx.drains.get(ORG, d.id))?.state).toBe('paused');
      expect(await tx.auditLog.page(ORG, { targetId: d.id, limit: 10 })).toHaveLength(1);
      return r;
    });
    expect(result).toMatchObject({ ok: true, from: 'healthy', drain: { state: 'paused', pauseReason: 'manual' } });
    expect(await store.drains.get(ORG, d.id)).toMatchObject({ state: 'paused', pauseReason: 'manual', version: d.version });
    const entries = await entriesFor(d.id);
    expect(entries).toHaveLength(1);
    // A typed API key is recorded as itself.
    expect(entries[0]).toMatchObject({ action: 'logs.drain.paused', actor: KEY, details: { state: 'paused', reason: 'maintenance' } });
  });

  it('writes nothing when the state changed under it, and reports the race with the drain as it now is', async () => {
    const d = await stored('healthy');
    // Another move lands after this read was made.
    await store.drains.transition(d.id, ['healthy'], 'degraded');
    const result = await store.unitOfWork((tx) => moveDrain(tx, d, 'paused_by_quota', { type: 'system', id: 'quota-ladder' }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(AppError);
    expect(result.error.code).toBe(MOVE_REFUSALS.raced);
    expect(result.current?.state).toBe('degraded');
    expect(await store.drains.get(ORG, d.id)).toMatchObject({ state: 'degraded', pauseReason: null });
    expect(await entriesFor(d.id)).toEqual([]);
  });

  it('treats a change of pause reason as a race: a quota reset never resumes a drain paused by hand meanwhile', async () => {
    const d = await stored('paused', 'quota');
    await store.unitOfWork((tx) => moveDrain(tx, d, 'paused_manually', USER));
    // The ladder's plans still hold the quota pause.
    const reset = await applyQuotaLevel(store, d, 'none', undefined);
    expect(reset).toMatchObject({ ok: false, error: { code: MOVE_REFUSALS.raced } });
    expect(await store.drains.get(ORG, d.id)).toMatchObject({ state: 'paused', pauseReason: 'manual' });
    expect((await entriesFor(d.id)).map((e) => e.action)).toEqual(['logs.drain.paused']);
  });

  it('lets exactly one of two concurrent moves decided on the same read win', async () => {
    const d = await stored('healthy');
    const results = await Promise.all([
      store.unitOfWork((tx) => moveDrain(tx, d, 'attempts_failed', { type: 'system', id: 'drain-health' })),
      store.unitOfWork((tx) => moveDrain(tx, d, 'paused_manually', USER)),
    ]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const lost = results.find((r) => !r.ok);
    expect(lost).toMatchObject({ ok: false, error: { code: MOVE_REFUSALS.raced } });
    const won = results.find((r) => r.ok)!;
    expect((await store.drains.get(ORG, d.id))?.state).toBe(won.ok ? won.drain.state : undefined);
    // A health move records nothing; a pause records itself: one entry at most, the winner's.
    expect((await entriesFor(d.id)).map((e) => e.action)).toEqual(won.ok && won.drain.state === 'paused' ? ['logs.drain.paused'] : []);
  });

  it('decides a lost race again from the drain as it now is (moveDrainAsItIs)', async () => {
    const d = await stored('healthy');
    await store.drains.transition(d.id, ['healthy'], 'degraded');
    const result = await store.unitOfWork((tx) => moveDrainAsItIs(tx, d, 'paused_manually', USER));
    expect(result).toMatchObject({ ok: true, from: 'degraded', drain: { state: 'paused' } });
    expect((await entriesFor(d.id)).map((e) => e.action)).toEqual(['logs.drain.paused']);
  });

  it('refuses an event that does not move the drain in its state as an error value with a code, and writes nothing', async () => {
    const d = await stored('healthy');
    const result = await store.unitOfWork((tx) => moveDrain(tx, d, 'resumed', USER));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(AppError);
    expect(result.error).toMatchObject({ code: MOVE_REFUSALS.illegal, details: { drainId: d.id, event: 'resumed', state: 'healthy' } });
    expect(await store.drains.get(ORG, d.id)).toMatchObject({ state: 'healthy', updatedAt: d.updatedAt });
    expect(await entriesFor(d.id)).toEqual([]);
  });

  it('reports a deleted drain as gone', async () => {
    const d = await stored('healthy');
    await store.drains.softDelete(ORG, d.id);
    const result = await store.unitOfWork((tx) => moveDrain(tx, d, 'paused_manually', USER));
    expect(result).toMatchObject({ ok: false, error: { code: MOVE_REFUSALS.gone } });
  });

  it('rolls the move back when its audit entry cannot be written', async () => {
    const d = await stored('healthy');
    const failing = createUnitOfWork(store.sql, async () => {
      throw new Error('audit unavailable');
    });
    await expect(failing((tx) => moveDrain(tx, d, 'paused_manually', USER))).rejects.toThrow('audit unavailable');
    expect(await store.drains.get(ORG, d.id)).toMatchObject({ state: 'healthy', pauseReason: null });
    expect(await entriesFor(d.id)).toEqual([]);
  });

  it('rolls the audit entry back with the move when the transaction fails after it', async () => {
    const d = await stored('paused', 'manual');
    await expect(store.unitOfWork(async (tx) => {
      expect((await moveDrain(tx, d, 'resumed', USER)).ok).toBe(true);
      throw new Error('later step failed');
    })).rejects.toThrow('later step failed');
    expect(await store.drains.get(ORG, d.id)).toMatchObject({ state: 'paused', pauseReason: 'manual' });
    expect(await entriesFor(d.id)).toEqual([]);
  });
});
