/**
 * The workflows family (spec 03 parts 2.4, 3, 4.3, 5, 7, 8): deployed
 * definitions from the seed, runs started, listed, read and cancelled, and
 * the durable executor that moves runs through the graph language.
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import { bucketsOf, type WorkflowDeps } from './context.js';
import { createWorkflowExecutor } from './background.js';
import { createRunWaker } from './wake.js';
import { workflowMigrations } from './migrations.js';
import { registerWorkflowRoutes } from './routes.js';
import { workflowPoliciesSeed, workflowsSeed } from './seed.js';
import { createWorkflowService } from './service.js';
import { createRollups } from './rollup.js';
import { createRecovery } from './recovery.js';
import { createWorkflowTemplatePort } from './template-port.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Logger } from '../../telemetry/logger.js';
import type { WorkflowTemplatePort } from '../platform-deps.js';

/** The in-process executors of each store, which a template install's runs wake at once (the others hear the store's notification). */
const localExecutors = new WeakMap<KernelStore, Set<() => void>>();

export const workflowsFamily = defineFamily<WorkflowDeps>({
  name: 'workflows',
  migrations: workflowMigrations,
  seed: [workflowsSeed, workflowPoliciesSeed],
  register(app: FastifyInstance, deps: WorkflowDeps) {
    const c = deps.config.workflows;
    const executor = c.executor ? createWorkflowExecutor(deps) : undefined;
    const wake = createRunWaker(deps.store.sql, deps.logger, () => executor?.wake());
    if (executor) {
      const executors = localExecutors.get(deps.store) ?? new Set();
      localExecutors.set(deps.store, executors);
      const wakeThis = (): void => executor.wake();
      executors.add(wakeThis);
      app.addHook('onClose', async () => {
        executors.delete(wakeThis);
      });
    }
    const service = createWorkflowService({ store: deps.store, forceCancelAfterMs: c.forceCancelAfterMs, wake });
    deps.metrics.workflowRunsFrom(() => service.repo.openRunCounts());
    if (executor) {
      app.addHook('onReady', async () => executor.start());
      app.addHook('onClose', async () => executor.stop());
    }
    registerWorkflowRoutes(app, { service, store: deps.store, limiter: deps.limiter, buckets: bucketsOf(c.rateLimits), rollups: createRollups(deps.store.sql),
      recovery: createRecovery({ store: deps.store, policy: (orgId) => service.repo.policy(orgId), wake }),
    });
  },
});

/** The workflows family's part of a template install (platform-deps.ts), for the composition root. */
export function createWorkflowsTemplatePort(deps: { store: KernelStore; logger: Logger }): WorkflowTemplatePort {
  const wake = createRunWaker(deps.store.sql, deps.logger, () => localExecutors.get(deps.store)?.forEach((w) => w()));
  return createWorkflowTemplatePort({ wake });
}

export type { WorkflowDeps };
