/**
 * Drain circuits on both stores: the repository's conditional moves (only one of two concurrent
 * openings or probe claims wins; only the probe's owner closes or reopens; a lapsed claim is taken
 * over), and two workers' circuits (deliver/circuit.ts) over one store: one worker's opening brakes
 * the other's live sends once it refreshes, only one of them probes, and the opening and closing
 * are audited once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../../../helpers/stores.js';
import type { Store } from '../../../../../src/store/store.js';
import type { Drain } from '../../../../../src/model/drain.js';
import { createCircuitsRepo } from '../../../../../src/modules/drains/tables/circuits.js';
import { createDrainCircuits, CIRCUIT_CLOSED, CIRCUIT_OPENED } from '../../../../../src/deliver/circuit.js';
import { hourOf } from '../../../../../src/model/time.js';
import { createLogger } from '../../../../../src/telemetry/logger.js';

const testLogger = () => createLogger('silent', 'test');

const USER = { type: 'user' as const, id: 'usr_ann' };
const ORG = 'org_circuits';
let n = 0;

function drain(): Drain {
  const now = new Date();
  const id = `drn_circuit_${Date.now()}_${++n}`;
  return {
    id, orgId: ORG, name: id, type: 'http', endpoint: 'https://example.com/logs', site: null, format: 'json',
    headers: [], secret: null, previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null,
    selectors: { sources: null, minSeverity: 'info', agents: '*', environments: ['production'], includeContent: false },
    sampling: null, redact: null, scrubRules: null, state: 'healthy', pauseReason: null,
    verifiedAt: now, verification: null, version: 1, createdBy: USER, createdAt: now, updatedAt: now,
  };
}

const throttled = { status: 'retryable', errorClass: 'http_4xx', retryAfterMs: 0 } as const;
const failed = { status: 'retryable', errorClass: 'http_5xx' } as const;
const delivered = { status: 'success', rejected: 0 } as const;

describe.each(STORE_KINDS)('drain circuits on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose());

  it('opens only from closed: of two concurrent openings one wins', async () => {
    const repo = createCircuitsRepo(store.sql);
    const d = drain();
    expect(await repo.get(d.id)).toBeUndefined();
    const both = await Promise.all([repo.open(d.id, 60_000), repo.open(d.id, 60_000)]);
    expect(both.filter((r) => r !== undefined)).toHaveLength(1);
    const row = (await repo.get(d.id))!;
    expect(row).toMatchObject({ state: 'open', reopenings: 0, probeOwner: null });
    expect(row.openUntil!.getTime() - row.openedAt!.getTime()).toBe(60_000);
    expect((await repo.notClosed()).map((r) => r.drainId)).toContain(d.id);
  });

  it('claims the probe only once the time is up, for one owner of two; the owner alone closes or reopens', async () => {
    const repo = createCircuitsRepo(store.sql);
    const early = drain();
    await repo.open(early.id, 60_000);
    expect(await repo.claimProbe(early.id, 'worker-a', 10_000)).toBeUndefined();

    const d = drain();
    await repo.open(d.id, 0);
    const claims = await Promise.all([repo.claimProbe(d.id, 'worker-a', 10_000), repo.claimProbe(d.id, 'worker-b', 10_000)]);
    const won = claims.filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
    const owner = won[0]!.probeOwner!;
    const other = owner === 'worker-a' ? 'worker-b' : 'worker-a';
    expect(won[0]).toMatchObject({ state: 'half_open' });
    // Not the owner: nothing moves.
    expect(await repo.close(d.id, other)).toBeUndefined();
    expect(await repo.reopen(d.id, other, 0)).toBeUndefined();
    // The owner's probe failed: open again, counted.
    expect(await repo.reopen(d.id, owner, 0)).toMatchObject({ state: 'open', reopenings: 1, probeOwner: null });
    // Another opening does not reset a circuit that is not closed.
    expect(await repo.open(d.id, 60_000)).toBeUndefined();
    expect(await repo.claimProbe(d.id, other, 10_000)).toMatchObject({ state: 'half_open', probeOwner: other });
    expect(await repo.close(d.id, other)).toMatchObject({ state: 'closed', reopenings: 0, openUntil: null });
    expect((await repo.notClosed()).map((r) => r.drainId)).not.toContain(d.id);
    // Closed: it can open again.
    expect(await repo.open(d.id, 0)).toMatchObject({ state: 'open', reopenings: 0 });
  });

  it('hands a lapsed probe claim to another worker', async () => {
    const repo = createCircuitsRepo(store.sql);
    const d = drain();
    await repo.open(d.id, 0);
    expect(await repo.claimProbe(d.id, 'worker-a', 60_000)).toBeDefined();
    expect(await repo.claimProbe(d.id, 'worker-b', 60_000)).toBeUndefined();
    const lapsed = drain();
    await repo.open(lapsed.id, 0);
    expect(await repo.claimProbe(lapsed.id, 'worker-a', 0)).toBeDefined();
    expect(await repo.claimProbe(lapsed.id, 'worker-b', 60_000)).toMatchObject({ probeOwner: 'worker-b' });
    // The dead worker's late answer moves nothing.
    expect(await repo.close(lapsed.id, 'worker-a')).toBeUndefined();
  });

  it('two workers: one opens, both brake, one probes, the opening and the closing audited once', async () => {
    const d = drain();
    await store.drains.insert(d);
    const braked = { a: [] as boolean[], b: [] as boolean[] };
    const opened: string[] = [];
    const circuitsOf = (owner: 'a' | 'b') =>
      createDrainCircuits({
        store, logger: testLogger(), owner, openAfterFailures: 3, openBaseMs: 10, openMaxMs: 50,
        events: { circuitOpened: (type) => opened.push(`${owner}:${type}`) },
        onBrake: (drainId, on) => drainId === d.id && braked[owner].push(on),
      });
    const a = circuitsOf('a');
    const b = circuitsOf('b');
    // Two failures then a success: the streak starts again, nothing opens.
    a.observe(d, failed, 500);
    a.observe(d, failed, 500);
    a.observe(d, delivered, 200);
    a.observe(d, failed, 500);
    a.observe(d, failed, 500);
    expect(a.braked(d.id)).toBe(false);
    // A 429 without Retry-After is a failure like any other: the third in a row opens.
    a.observe(d, { status: 'retryable', errorClass: 'http_4xx' }, 429);
    expect(a.braked(d.id)).toBe(true);
    await a.settled();
    // B opens too, from its own failures at the same moment: it loses, and learns the circuit is open.
    b.observe(d, throttled, 429);
    await b.settled();
    expect(b.braked(d.id)).toBe(true);
    expect(opened).toEqual(['a:http']);
    expect(braked).toEqual({ a: [true], b: [true] });

    const row = (await createCircuitsRepo(store.sql).get(d.id))!;
    await Promise.all([a.refresh(), b.refresh()]);
    // Both wait until the time is up (open for at most 50 ms), then both see a probe due.
    const due = Math.max(Date.now(), row.openUntil!.getTime() + 1);
    expect(a.phase(d.id, row.openUntil!.getTime() - 1)).toBe('wait');
    expect(a.phase(d.id, due)).toBe('probe');
    expect(b.phase(d.id, due)).toBe('probe');
    await expect.poll(() => Date.now() > row.openUntil!.getTime()).toBe(true);
    const claims = await Promise.all([a.claimProbe(d), b.claimProbe(d)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    const [prober, waiter] = claims[0] ? [a, b] : [b, a];
    expect(waiter.phase(d.id)).toBe('wait');
    // The probe fails: open again, for longer, audited as an opening.
    await prober.probed(d, failed);
    const reopened = (await createCircuitsRepo(store.sql).get(d.id))!;
    expect(reopened).toMatchObject({ state: 'open', reopenings: 1 });
    await expect.poll(() => Date.now() > reopened.openUntil!.getTime()).toBe(true);
    await waiter.refresh();
    expect(await waiter.claimProbe(d)).toBe(true);
    await waiter.probed(d, delivered);
    expect(waiter.braked(d.id)).toBe(false);
    await prober.refresh();
    expect(prober.braked(d.id)).toBe(false);
    expect(braked).toEqual({ a: [true, false], b: [true, false] });

    const audit = await store.audit.page(ORG, { targetId: d.id, limit: 10 });
    const actions = audit.map((e) => e.action).sort();
    expect(actions).toEqual([CIRCUIT_CLOSED, CIRCUIT_OPENED, CIRCUIT_OPENED]);
    const openings = audit.filter((e) => e.action === CIRCUIT_OPENED).map((e) => (e.details as { reason: string }).reason).sort();
    expect(openings).toEqual(['failures', 'probe_failed']);
    expect(audit.every((e) => e.actor.type === 'system' && e.actor.id === 'drain-circuit')).toBe(true);
    const h = hourOf(Date.now());
    const byHour = await createCircuitsRepo(store.sql).openingsByHour(d.id, h - 1, h);
    expect([...byHour.values()].reduce((x, y) => x + y, 0)).toBe(2);
  });
});
