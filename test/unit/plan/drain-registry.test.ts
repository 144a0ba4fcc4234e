/**
 * The drain registry recompiles only what changed: a drain whose row is
 * unchanged keeps its compiled plan (the same object) across a rebuild.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createDrainRegistry } from '../../../src/plan/drain-registry.js';
import { createSecretBox } from '../../../src/security/secret-box.js';
import { generateSecret } from '../../../src/sign/standard-webhooks.js';
import type { Drain } from '../../../src/model/drain.js';
import type { Store } from '../../../src/store/store.js';
import { drainRow } from '../pipeline/fixture.js';
import { silentLogger } from '../../../src/telemetry/logger.js';

const box = createSecretBox(randomBytes(32));

function registryOver(rows: () => Drain[], version: () => number) {
  const store = {
    secretBox: box,
    drains: { configVersion: async () => version(), listAll: async () => rows(), watchConfig: async () => async () => {} },
    backlog: { usage: async () => new Map() },
    unitOfWork: async () => undefined,
  } as unknown as Pick<Store, 'drains' | 'secretBox' | 'backlog' | 'unitOfWork'>;
  return createDrainRegistry({ store, refreshMs: 60_000, listen: false, logger: silentLogger(), quota: { eventsPerDay: 1e12, bytesPerDay: 1e15 } });
}

const signed = (id: string, over: Partial<Drain> = {}) => drainRow(id, { secret: box.seal(generateSecret()), ...over });

describe('drain registry', () => {
  afterEach(() => vi.useRealTimers());

  it('recompiles the changed drain and keeps the plans of the others', async () => {
    const a = signed('drn_a');
    let b = signed('drn_b');
    let version = 1;
    const registry = registryOver(() => [a, b], () => version);
    await registry.current();
    const planA = registry.planFor('drn_a');
    const planB = registry.planFor('drn_b');
    expect(planA?.signingKeys).toHaveLength(1);

    b = { ...b, version: 2, updatedAt: new Date(b.updatedAt.getTime() + 1000), endpoint: 'https://127.0.0.1:1/moved' };
    version = 2;
    await registry.current();
    expect(registry.planFor('drn_a')).toBe(planA);
    expect(registry.planFor('drn_b')).not.toBe(planB);
    expect(registry.planFor('drn_b')?.url).toBe('https://127.0.0.1:1/moved');
    expect(registry.plansFor('org_acme')).toEqual([planA, registry.planFor('drn_b')]);
  });

  it('recompiles a drain whose state moved, and one whose rotation window closed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const closesAt = Date.now() + 60_000;
    let a = signed('drn_a', { previousSecret: box.seal(generateSecret()), rotationExpiresAt: new Date(closesAt) });
    let version = 1;
    const registry = registryOver(() => [a], () => version);
    await registry.current();
    const inWindow = registry.planFor('drn_a');
    expect(inWindow?.signingKeys).toHaveLength(2);

    // The window closes with nothing written: the next check rebuilds and signs with one key.
    vi.setSystemTime(closesAt + 1);
    await registry.current();
    const afterWindow = registry.planFor('drn_a');
    expect(afterWindow).not.toBe(inWindow);
    expect(afterWindow?.signingKeys).toHaveLength(1);

    a = { ...a, state: 'degraded' };
    version = 2;
    await registry.current();
    expect(registry.planFor('drn_a')).not.toBe(afterWindow);
    expect(registry.planFor('drn_a')?.drain.state).toBe('degraded');
  });
});
