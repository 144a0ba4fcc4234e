/**
 * The deploy rows as a durable job (templates deploy-repository.ts), on both connections: one
 * claimer wins a deploy, a lease that ran out is taken over and the old holder can no longer move
 * it, status moves start only from the statuses the state machine allows, the answer a deploy's
 * requests give is decided once, and one deploy per caller and key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { deployMigrations } from '../../../../src/modules/templates/deploy-migrations.js';
import { createDeployRepo, type NewDeploy } from '../../../../src/modules/templates/deploy-repository.js';

const kinds = [
  { name: 'pglite', open: async () => ({ store: await openStore({ dataDir: 'memory://', migrations: deployMigrations }), db: undefined as TestDatabase | undefined }) },
  {
    name: 'postgres',
    open: async () => {
      const db = await createTestDatabase();
      return { store: await openStore({ databaseUrl: db.url, maxConnections: 6, migrations: deployMigrations }), db };
    },
  },
];

let n = 0;
const deploy = (over: Partial<NewDeploy> = {}): NewDeploy => {
  n += 1;
  return {
    id: `dpl_${n}`, orgId: 'org_a', templateId: 'tpl_a', version: 1, requestedBy: 'usr_a', keyScope: 'user:usr_a', idempotencyKey: `key-${n}-abcdefghijklmnop`,
    agentId: `agt_${n}`, request: { version: 1 }, ...over,
  };
};

describe.each(kinds)('template deploys as a job ($name)', (kind) => {
  let store: Store;
  let db: TestDatabase | undefined;
  beforeAll(async () => ({ store, db } = await kind.open()));
  afterAll(async () => {
    await store.close();
    await db?.drop();
  });

  it('lets one of many concurrent claimers take a deploy, and none a held one', async () => {
    const repo = createDeployRepo(store.sql);
    await store.sql.query('delete from template_deploys');
    const d = deploy();
    await repo.insert(d);
    const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => repo.claim(`owner-${i}`, 60_000)));
    const won = claims.filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ id: d.id, status: 'running', stage: 'install', attempts: 1 });
    expect(await repo.claim('late', 60_000)).toBeUndefined();
  });

  it('takes over a deploy whose lease ran out; the old holder then moves nothing', async () => {
    const repo = createDeployRepo(store.sql);
    await store.sql.query('delete from template_deploys');
    const d = deploy();
    await repo.insert(d);
    expect(await repo.claim('dead', 60_000)).toBeDefined();
    // The holder died: its lease is made to have run out, as time would.
    await store.sql.query(`update template_deploys set lease_until = now() - interval '1 second' where id = $1`, [d.id]);
    const taken = await repo.claim('heir', 60_000);
    expect(taken).toMatchObject({ id: d.id, lease_owner: 'heir', attempts: 2 });
    expect(await repo.renew(d.id, 'dead', 60_000)).toBe(false);
    expect(await repo.move(d.id, 'dead', 'running', { type: 'installed' }, { result: { by: 'dead' }, answerWaitMs: 10_000 })).toBe(false);
    expect(await repo.move(d.id, 'heir', 'running', { type: 'installed' }, { result: { by: 'heir' }, answerWaitMs: 10_000 })).toBe(true);
    const row = await repo.find(d.id);
    expect(row).toMatchObject({ status: 'succeeded', stage: 'done', result: { by: 'heir' }, lease_owner: null, answer_status: 201 });
    expect(row!.ended_at).not.toBeNull();
    // Ended: nothing more to claim, and no second move.
    expect(await repo.claim('third', 60_000)).toBeUndefined();
    expect(await repo.move(d.id, 'heir', 'running', { type: 'installed' }, { answerWaitMs: 10_000 })).toBe(false);
  });

  it('moves a refused deploy through rollback_pending and keeps its refusal', async () => {
    const repo = createDeployRepo(store.sql);
    await store.sql.query('delete from template_deploys');
    const d = deploy();
    await repo.insert(d);
    await repo.claim('o', 60_000);
    const error = { status: 409, body: { code: 'INSTALL_POLICY_SINGLE', message: 'single' } };
    expect(await repo.move(d.id, 'o', 'running', { type: 'refused' }, { error, answerWaitMs: 10_000 })).toBe(true);
    expect(await repo.find(d.id)).toMatchObject({ status: 'rollback_pending', stage: 'rollback', lease_owner: 'o', answer_status: null });
    expect(await repo.move(d.id, 'o', 'rollback_pending', { type: 'removed' }, { answerWaitMs: 10_000 })).toBe(true);
    expect(await repo.find(d.id)).toMatchObject({ status: 'rolled_back', error: error.body, error_status: 409, answer_status: 201 });
  });

  it('decides the answer once: 202 after the window, never 201 after it', async () => {
    const repo = createDeployRepo(store.sql);
    await store.sql.query('delete from template_deploys');
    const d = deploy();
    await repo.insert(d);
    expect(await repo.answer(d.id, 60_000)).toEqual({ status: 'running', answerStatus: null, due: false });
    // Inside the window nothing is decided by a request.
    await repo.answerAccepted(d.id, 60_000);
    expect((await repo.answer(d.id, 60_000))!.answerStatus).toBeNull();
    // A window of 0 has passed: the request fixes 202, and a later end keeps it.
    await repo.answerAccepted(d.id, 0);
    expect(await repo.answer(d.id, 0)).toEqual({ status: 'running', answerStatus: 202, due: true });
    await repo.claim('o', 60_000);
    expect(await repo.move(d.id, 'o', 'running', { type: 'installed' }, { result: {}, answerWaitMs: 60_000 })).toBe(true);
    expect((await repo.answer(d.id, 60_000))!.answerStatus).toBe(202);
  });

  it('holds one deploy per caller and key', async () => {
    const repo = createDeployRepo(store.sql);
    const d = deploy();
    await repo.insert(d);
    await expect(repo.insert({ ...deploy(), keyScope: d.keyScope, idempotencyKey: d.idempotencyKey })).rejects.toThrow(/unique|duplicate/i);
    await repo.insert({ ...deploy(), keyScope: 'user:other', idempotencyKey: d.idempotencyKey });
  });

  it('merges concurrent session writes of one caller without losing one', async () => {
    const writes = Array.from({ length: 8 }, (_, i) => store.unitOfWork((tx) =>
      createDeployRepo(tx.sql).mergeSession('usr_s', 'tpl_s', 1, { answers: { [`q${i}`]: { v: i } }, connectState: { c: { [`k${i}`]: true } } })));
    await Promise.all(writes);
    const s = await createDeployRepo(store.sql).session('usr_s', 'tpl_s', 1);
    expect(Object.keys(s.answers).sort()).toEqual(['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7']);
    expect(Object.keys((s.connectState as { c: object }).c)).toHaveLength(8);
    expect((await createDeployRepo(store.sql).session('usr_other', 'tpl_s', 1)).answers).toEqual({});
  });
});
