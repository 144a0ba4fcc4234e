/**
 * Idempotency keys on both stores: the repository's claim states, one winner
 * among concurrent claims (the table's primary key decides), expiry, scope
 * isolation, abandon, the sweep; and the kernel's withIdempotency around a
 * handler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS, type ClaimResult } from '../../../src/store/idempotency-repo.js';
import { canonicalJson, principalScope, requestFingerprint, withIdempotency } from '../../../src/api/kernel/idempotency.js';
import { AppError } from '../../../src/errors.js';

const ROUTE = 'POST /workflows/runs';
let n = 0;
/** A key no other test uses. */
const freshKey = () => `key-${Date.now()}-${++n}`;
const fp = (v: unknown) => requestFingerprint(v);

describe('request fingerprints', () => {
  it('ignore object key order at every depth, and nothing else', () => {
    const a = { workflowName: 'w', input: { b: [1, { y: 2, x: 1 }], a: 'x' }, tags: ['t1', 't2'] };
    const b = { tags: ['t1', 't2'], input: { a: 'x', b: [1, { x: 1, y: 2 }] }, workflowName: 'w' };
    expect(canonicalJson(b)).toBe('{"input":{"a":"x","b":[1,{"x":1,"y":2}]},"tags":["t1","t2"],"workflowName":"w"}');
    expect(fp(a)).toBe(fp(b));
    expect(fp(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(fp({ ...a, tags: ['t2', 't1'] })).not.toBe(fp(a));
    expect(fp({ ...a, input: { ...a.input, a: 'y' } })).not.toBe(fp(a));
    expect(fp({ n: 1 })).not.toBe(fp({ n: '1' }));
    // JSON's rules: undefined members are left out; no body is null.
    expect(fp({ a: 1, b: undefined })).toBe(fp({ a: 1 }));
    expect(fp(undefined)).toBe(fp(null));
  });

  it('scopes a principal by its credential or its user', () => {
    expect(principalScope({ kind: 'api_key', userId: 'usr_ann', credentialId: 'k1' })).toBe('key:k1');
    expect(principalScope({ kind: 'session', userId: 'usr_ann', credentialId: 's1' })).toBe('user:usr_ann');
  });
});

describe.each(STORE_KINDS)('idempotency keys on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose());

  const claim = (key: string, fingerprint: string, extra: { scope?: string; ttlMs?: number; now?: Date } = {}) =>
    store.idempotency.claim({ scope: extra.scope ?? 'key:k1', route: ROUTE, key, fingerprint, ttlMs: extra.ttlMs, now: extra.now });

  describe('the repository', () => {
    it('claims a fresh key, then replays its stored outcome to the same request, body as sent', async () => {
      const key = freshKey();
      const first = await claim(key, fp({ a: 1 }));
      expect(first).toMatchObject({ kind: 'new' });
      const claimId = (first as { claimId: string }).claimId;
      // Keys in an order jsonb would not keep: the replay gives the same JSON text.
      const body = { runId: 'run_1', status: 'queued', a: [1, 2, { z: 1, b: 2 }], nested: { zz: null, aa: 'x' } };
      expect(await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key, claimId }, { status: 202, body })).toBe(true);
      const again = await claim(key, fp({ a: 1 }));
      expect(again).toEqual({ kind: 'replay', status: 202, body });
      expect(JSON.stringify((again as { body: unknown }).body)).toBe(JSON.stringify(body));
      const row = await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key });
      expect(row).toMatchObject({ state: 'completed', fingerprint: fp({ a: 1 }), outcome: { status: 202, body } });
      expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(DEFAULT_IDEMPOTENCY_TTL_MS);
    });

    it('replays an outcome without a body, and a null body, as stored', async () => {
      const k1 = freshKey();
      const c1 = (await claim(k1, 'f')) as { claimId: string };
      await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key: k1, claimId: c1.claimId }, { status: 204, body: undefined });
      expect(await claim(k1, 'f')).toEqual({ kind: 'replay', status: 204, body: undefined });
      const k2 = freshKey();
      const c2 = (await claim(k2, 'f')) as { claimId: string };
      await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key: k2, claimId: c2.claimId }, { status: 200, body: null });
      expect(await claim(k2, 'f')).toEqual({ kind: 'replay', status: 200, body: null });
    });

    it('answers in_progress to the same request before completion, conflict to another one (with the original once complete)', async () => {
      const key = freshKey();
      const first = (await claim(key, fp({ a: 1 }))) as { kind: 'new'; claimId: string };
      expect(await claim(key, fp({ a: 1 }))).toEqual({ kind: 'in_progress' });
      expect(await claim(key, fp({ a: 2 }))).toEqual({ kind: 'conflict' });
      await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key, claimId: first.claimId }, { status: 202, body: { runId: 'run_9' } });
      expect(await claim(key, fp({ a: 2 }))).toEqual({ kind: 'conflict', original: { status: 202, body: { runId: 'run_9' } } });
      // The conflicting request changed nothing.
      expect(await claim(key, fp({ a: 1 }))).toEqual({ kind: 'replay', status: 202, body: { runId: 'run_9' } });
    });

    it('keeps keys of two principals, and of two routes, apart', async () => {
      const key = freshKey();
      const a = (await claim(key, 'fa', { scope: 'key:k1' })) as { claimId: string };
      const b = (await claim(key, 'fb', { scope: 'user:usr_bob' })) as { claimId: string };
      expect(a).toMatchObject({ kind: 'new' });
      expect(b).toMatchObject({ kind: 'new' });
      const other = await store.idempotency.claim({ scope: 'key:k1', route: 'POST /channels/sms/send', key, fingerprint: 'fx' });
      expect(other).toMatchObject({ kind: 'new' });
      await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key, claimId: a.claimId }, { status: 202, body: { who: 'a' } });
      await store.idempotency.complete({ scope: 'user:usr_bob', route: ROUTE, key, claimId: b.claimId }, { status: 201, body: { who: 'b' } });
      expect(await claim(key, 'fa', { scope: 'key:k1' })).toEqual({ kind: 'replay', status: 202, body: { who: 'a' } });
      expect(await claim(key, 'fb', { scope: 'user:usr_bob' })).toEqual({ kind: 'replay', status: 201, body: { who: 'b' } });
      // Abandoning one principal's claim frees only its own.
      expect(await store.idempotency.abandon({ scope: 'key:k1', route: 'POST /channels/sms/send', key })).toBe(true);
      expect(await claim(key, 'fa', { scope: 'key:k1' })).toMatchObject({ kind: 'replay' });
    });

    it('frees an abandoned key; never a completed one, nor another claim than the one named', async () => {
      const key = freshKey();
      const first = (await claim(key, 'f1')) as { claimId: string };
      expect(await store.idempotency.abandon({ scope: 'key:k1', route: ROUTE, key, claimId: 'not-this-claim' })).toBe(false);
      expect(await claim(key, 'f1')).toEqual({ kind: 'in_progress' });
      expect(await store.idempotency.abandon({ scope: 'key:k1', route: ROUTE, key, claimId: first.claimId })).toBe(true);
      expect(await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key })).toBeUndefined();
      // Free again: even another request may take it now.
      const second = (await claim(key, 'f2')) as { kind: string; claimId: string };
      expect(second.kind).toBe('new');
      // The first owner's late completion finds nothing of its own.
      expect(await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key, claimId: first.claimId }, { status: 200, body: 1 })).toBe(false);
      expect(await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key, claimId: second.claimId }, { status: 200, body: 2 })).toBe(true);
      expect(await store.idempotency.abandon({ scope: 'key:k1', route: ROUTE, key })).toBe(false);
      expect(await claim(key, 'f2')).toEqual({ kind: 'replay', status: 200, body: 2 });
    });

    it('treats an expired key as absent: a claim takes it over, the old owner can no longer complete it', async () => {
      const t0 = new Date('2030-01-01T00:00:00Z');
      const at = (ms: number) => new Date(t0.getTime() + ms);
      const key = freshKey();
      const first = (await claim(key, 'f1', { ttlMs: 60_000, now: t0 })) as { claimId: string };
      expect(await claim(key, 'f1', { now: at(59_999) })).toEqual({ kind: 'in_progress' });
      const taken = (await claim(key, 'f1', { ttlMs: 60_000, now: at(60_000) })) as { kind: string; claimId: string };
      expect(taken.kind).toBe('new');
      expect(taken.claimId).not.toBe(first.claimId);
      expect(await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key, claimId: first.claimId }, { status: 200, body: 'late' })).toBe(false);
      expect(await store.idempotency.complete({ scope: 'key:k1', route: ROUTE, key, claimId: taken.claimId }, { status: 201, body: 'mine' })).toBe(true);
      expect(await claim(key, 'f1', { now: at(61_000) })).toEqual({ kind: 'replay', status: 201, body: 'mine' });
      // A completed key past its expiry is free too, for any request.
      const again = await claim(key, 'another', { now: at(120_000) });
      expect(again.kind).toBe('new');
      expect((await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key }))?.fingerprint).toBe('another');
    });

    it('sweeps expired keys only', async () => {
      const t0 = new Date('2031-01-01T00:00:00Z');
      const old = freshKey();
      const live = freshKey();
      await claim(old, 'f', { ttlMs: 1000, now: t0 });
      await claim(live, 'f', { ttlMs: 10_000, now: t0 });
      const swept = await store.idempotency.sweepExpired(new Date(t0.getTime() + 5000));
      expect(swept).toBeGreaterThanOrEqual(1);
      expect(await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key: old })).toBeUndefined();
      expect(await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key: live })).toBeDefined();
    });

    it('holds uniqueness in the table itself: a second row for one key is refused', async () => {
      const key = freshKey();
      await claim(key, 'f');
      await expect(store.sql.query(
        `insert into idempotency_keys (scope, route, key, fingerprint, state, claim_id, created_at, expires_at)
         values ('key:k1', $1, $2, 'f', 'in_progress', 'x', now(), now() + interval '1 hour')`,
        [ROUTE, key],
      )).rejects.toMatchObject({ code: '23505' });
    });

    it('refuses a key too long for the index and a ttl that is not positive', async () => {
      await expect(claim('k'.repeat(256), 'f')).rejects.toThrow(RangeError);
      await expect(claim('', 'f')).rejects.toThrow(RangeError);
      await expect(claim(freshKey(), 'f', { ttlMs: 0 })).rejects.toThrow(RangeError);
    });

    it('gives exactly one of many concurrent claims of a fresh key the key', async () => {
      const key = freshKey();
      const results = await Promise.all(Array.from({ length: 40 }, () => claim(key, 'same')));
      const kinds = results.map((r) => r.kind);
      expect(kinds.filter((k) => k === 'new')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'in_progress')).toHaveLength(39);
    });

    it('gives exactly one of many concurrent claims of an expired key the key, whatever their requests', async () => {
      const t0 = new Date('2032-01-01T00:00:00Z');
      const key = freshKey();
      await claim(key, 'old', { ttlMs: 1000, now: t0 });
      const later = new Date(t0.getTime() + 2000);
      const results: ClaimResult[] = await Promise.all(
        Array.from({ length: 40 }, (_, i) => claim(key, i % 2 === 0 ? 'even' : 'odd', { now: later })),
      );
      const winners = results.filter((r) => r.kind === 'new');
      expect(winners).toHaveLength(1);
      const row = await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key });
      expect(row!.claimId).toBe((winners[0] as { claimId: string }).claimId);
      // The losers saw the winner's claim: in progress for its request, a conflict for the other.
      for (const r of results.filter((x) => x.kind !== 'new')) {
        expect(['in_progress', 'conflict']).toContain(r.kind);
      }
    });
  });

  describe('withIdempotency', () => {
    const request = (key: string, body: unknown, scope = 'key:k1') => ({ scope, route: ROUTE, key, fingerprint: fp(body) });

    it('runs the handler once and replays its outcome without running it again', async () => {
      const key = freshKey();
      let runs = 0;
      const handler = async () => {
        runs++;
        return { status: 202, body: { runId: `run_${runs}`, status: 'queued' } };
      };
      const first = await withIdempotency(store.idempotency, request(key, { input: { a: 1, b: 2 } }), handler);
      expect(first).toEqual({ status: 202, body: { runId: 'run_1', status: 'queued' }, replayed: false });
      // The same request, its keys in another order.
      const second = await withIdempotency(store.idempotency, request(key, { input: { b: 2, a: 1 } }), handler);
      expect(second).toEqual({ status: 202, body: { runId: 'run_1', status: 'queued' }, replayed: true });
      expect(runs).toBe(1);
    });

    it('answers 409 IDEMPOTENCY_KEY_REUSED to a different payload under the same key, with what the route adds', async () => {
      const key = freshKey();
      await withIdempotency(store.idempotency, request(key, { input: 1 }), async () => ({ status: 202, body: { runId: 'run_x' } }));
      let ran = false;
      const reused = withIdempotency(store.idempotency, request(key, { input: 2 }), async () => {
        ran = true;
        return { status: 202, body: {} };
      }, { conflictDetails: (original) => ({ runId: (original?.body as { runId: string }).runId }) });
      await expect(reused).rejects.toBeInstanceOf(AppError);
      await expect(reused).rejects.toMatchObject({ statusCode: 409, code: 'IDEMPOTENCY_KEY_REUSED', details: { runId: 'run_x' } });
      expect(ran).toBe(false);
    });

    it('answers 409 IDEMPOTENCY_KEY_IN_PROGRESS while the first request runs', async () => {
      const key = freshKey();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const first = withIdempotency(store.idempotency, request(key, 'x'), async () => {
        await gate;
        return { status: 200, body: 'done' };
      });
      // Wait until the first has its claim.
      for (let i = 0; i < 100 && !(await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key })); i++) await new Promise((r) => setTimeout(r, 10));
      await expect(withIdempotency(store.idempotency, request(key, 'x'), async () => ({ status: 200, body: 'again' })))
        .rejects.toMatchObject({ statusCode: 409, code: 'IDEMPOTENCY_KEY_IN_PROGRESS' });
      release();
      expect(await first).toEqual({ status: 200, body: 'done', replayed: false });
      expect(await withIdempotency(store.idempotency, request(key, 'x'), async () => ({ status: 200, body: 'again' })))
        .toEqual({ status: 200, body: 'done', replayed: true });
    });

    it('runs the handler of only one of many concurrent requests with one key', async () => {
      const key = freshKey();
      let runs = 0;
      const settled = await Promise.allSettled(Array.from({ length: 25 }, () =>
        withIdempotency(store.idempotency, request(key, { same: true }), async () => {
          runs++;
          await new Promise((r) => setTimeout(r, 50));
          return { status: 201, body: { id: 'one' } };
        }),
      ));
      expect(runs).toBe(1);
      const fulfilled = settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<{ replayed: boolean }>).value);
      expect(fulfilled.filter((v) => !v.replayed)).toHaveLength(1);
      for (const s of settled) {
        if (s.status === 'rejected') expect(s.reason).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_PROGRESS' });
        else expect(s.value).toMatchObject({ status: 201, body: { id: 'one' } });
      }
    });

    it('frees the key when the handler throws, so a retry runs it', async () => {
      const key = freshKey();
      await expect(withIdempotency(store.idempotency, request(key, 'p'), async () => {
        throw new AppError(503, 'CONTROL_UNAVAILABLE', 'try again');
      })).rejects.toMatchObject({ code: 'CONTROL_UNAVAILABLE' });
      expect(await store.idempotency.find({ scope: 'key:k1', route: ROUTE, key })).toBeUndefined();
      expect(await withIdempotency(store.idempotency, request(key, 'p'), async () => ({ status: 202, body: 'ran' })))
        .toEqual({ status: 202, body: 'ran', replayed: false });
    });

    it('keeps two principals using one key independent', async () => {
      const key = freshKey();
      const a = await withIdempotency(store.idempotency, request(key, 'a', 'key:k1'), async () => ({ status: 202, body: 'a' }));
      const b = await withIdempotency(store.idempotency, request(key, 'b', 'user:usr_bob'), async () => ({ status: 202, body: 'b' }));
      expect([a.replayed, b.replayed]).toEqual([false, false]);
      expect((await withIdempotency(store.idempotency, request(key, 'b', 'user:usr_bob'), async () => ({ status: 500, body: 'no' }))).body).toBe('b');
    });

    it('lets a key expire: the same request then runs again', async () => {
      const key = freshKey();
      let runs = 0;
      const handler = async () => ({ status: 202, body: ++runs });
      await withIdempotency(store.idempotency, { ...request(key, 'e'), ttlMs: 150 }, handler);
      expect((await withIdempotency(store.idempotency, { ...request(key, 'e'), ttlMs: 150 }, handler)).replayed).toBe(true);
      await new Promise((r) => setTimeout(r, 250));
      expect(await withIdempotency(store.idempotency, { ...request(key, 'e'), ttlMs: 150 }, handler)).toEqual({ status: 202, body: 2, replayed: false });
    });

    it('completes the key in the unit of work that makes the effect: both commit, or neither', async () => {
      const key = freshKey();
      const ref = request(key, 'uow');
      const failed = withIdempotency(store.idempotency, ref, ({ claimId }) =>
        store.unitOfWork(async (tx) => {
          await tx.idempotency.complete({ ...ref, claimId }, { status: 201, body: 'effect' });
          throw new Error('effect failed after the outcome was written');
        }));
      await expect(failed).rejects.toThrow('effect failed');
      // Rolled back with the effect, then freed.
      expect(await store.idempotency.find(ref)).toBeUndefined();
      const done = await withIdempotency(store.idempotency, ref, ({ claimId }) =>
        store.unitOfWork(async (tx) => {
          const outcome = { status: 201, body: 'effect' };
          await tx.idempotency.complete({ ...ref, claimId }, outcome);
          return outcome;
        }));
      expect(done).toEqual({ status: 201, body: 'effect', replayed: false });
      expect((await store.idempotency.find(ref))?.outcome).toEqual({ status: 201, body: 'effect' });
    });
  });
});
