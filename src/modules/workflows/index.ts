/**
 * The workflows family (spec 03 parts 2.4, 3, 4.3, 5, 7, 8): deployed
 * definitions from the seed, runs started, listed, read and cancelled, and
 * the durable executor that moves runs through the graph language.
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import { bucketsOf, type WorkflowDeps } from './context.js';
import { createExecutor, type Executor } from './executor.js';
import { createRunWaker } from './wake.js';
import { workflowMigrations } from './migrations.js';
import { registerWorkflowRoutes } from './routes.js';
import { workflowPoliciesSeed, workflowsSeed } from './seed.js';
import { createWorkflowService } from './service.js';
import { createRollups } from './rollup.js';
import { createRecovery } from './recovery.js';

export const workflowsFamily = defineFamily<WorkflowDeps>({
  name: 'workflows',
  migrations: workflowMigrations,
  seed: [workflowsSeed, workflowPoliciesSeed],
  register(app: FastifyInstance, deps: WorkflowDeps) {
    const c = deps.config.workflows;
    const executor = c.executor ? createWorkflowExecutor(deps) : undefined;
    const wake = createRunWaker(deps.store.sql, deps.logger, () => executor?.wake());
    const service = createWorkflowService({ store: deps.store, forceCancelAfterMs: c.forceCancelAfterMs, wake });
    if (executor) {
      app.addHook('onReady', async () => executor.start());
      app.addHook('onClose', async () => executor.stop());
    }
    registerWorkflowRoutes(app, { service, store: deps.store, limiter: deps.limiter, buckets: bucketsOf(c.rateLimits), rollups: createRollups(deps.store.sql),
      recovery: createRecovery({ store: deps.store, policy: (orgId) => service.repo.policy(orgId), wake }),
    });
  },
});

/**
 * An executor on this process's store, as configured (WORKFLOW_LEASE_MS, WORKFLOW_POLL_MS,
 * WORKFLOW_EXECUTOR_SLOTS): the API's (`start`, `serve`) through the family, a `logdrain worker`'s
 * through the process composition (src/commands/run.ts).
 */
export function createWorkflowExecutor(deps: Pick<WorkflowDeps, 'config' | 'store' | 'logger'>): Executor {
  const c = deps.config.workflows;
  return createExecutor({ store: deps.store, logger: deps.logger, leaseMs: c.leaseMs, pollMs: c.pollMs, slots: c.slots });
}

export type { WorkflowDeps };
