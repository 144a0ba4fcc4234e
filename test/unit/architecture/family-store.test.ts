/**
 * The families are handed the kernel store: no drain table, no backlog, no log copy, no deliveries
 * (store/kernel.ts, src/modules/platform-deps.ts). The type half is checked by the compiler
 * (`npm run typecheck`): each `@ts-expect-error` below fails the build if the property it names
 * comes back. The run half checks the object the composition root hands them.
 */
import { describe, expect, it } from 'vitest';
import type { PlatformDeps } from '../../../src/modules/platform-deps.js';
import type { KernelStore } from '../../../src/store/kernel.js';
import type { UnitOfWork } from '../../../src/store/unit-of-work.js';
import type { DrainDeps } from '../../../src/modules/drains/index.js';
import type { LogDeps } from '../../../src/modules/logs/context.js';
import { openStore } from '../../../src/store/store.js';

type FamilyStore = PlatformDeps['store'];

// @ts-expect-error the families' store has no drain table
export type NoDrains = FamilyStore['drains'];
// @ts-expect-error nor the backlog
export type NoBacklog = FamilyStore['backlog'];
// @ts-expect-error nor the platform log copy
export type NoLogs = FamilyStore['logs'];
// @ts-expect-error nor the deliveries
export type NoDeliveries = FamilyStore['deliveries'];
// @ts-expect-error the drains family reaches its tables through `drainTables`, not its store
export type DrainFamilyNoDrains = DrainDeps['store']['drains'];
// @ts-expect-error the logs family reads the log copy through `logs`, not its store
export type LogFamilyNoLogs = LogDeps['store']['logs'];
// @ts-expect-error a unit of work binds no drain table: the drains family binds its own (tx.sql)
export type UnitNoDrains = UnitOfWork['drains'];
// @ts-expect-error nor deliveries
export type UnitNoDeliveries = UnitOfWork['deliveries'];

/** What the kernel does hold, named so a rename here fails the build too. */
export type KernelParts = Pick<KernelStore, 'sql' | 'secretBox' | 'auth' | 'audit' | 'idempotency' | 'rateLimits' | 'tenancy' | 'unitOfWork' | 'ping'>;

describe("the families' store", () => {
  it('is the kernel: the object handed to families holds no table the engine writes', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    try {
      const keys = Object.keys(store.kernel);
      for (const engineTable of ['drains', 'deliveries', 'verifications', 'probes', 'health', 'deadLetters', 'backlog', 'logs', 'queue']) {
        expect(keys).not.toContain(engineTable);
      }
      expect(keys).toEqual(expect.arrayContaining(['sql', 'secretBox', 'auth', 'audit', 'idempotency', 'rateLimits', 'tenancy', 'unitOfWork', 'ping']));
      // A family's unit of work binds the kernel's repositories only.
      const bound = await store.kernel.unitOfWork(async (tx) => Object.keys(tx));
      expect(bound.sort()).toEqual(['afterCommit', 'audit', 'auditLog', 'changed', 'idempotency', 'sql', 'tenancy']);
    } finally {
      await store.close();
    }
  });
});
