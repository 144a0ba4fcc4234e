/**
 * The workflows family (spec 03 parts 2.4, 3, 4.3, 5, 7, 8): deployed
 * definitions from the seed, runs started, listed, read and cancelled, and
 * the durable executor that moves runs through the graph language.
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import { bucketsOf, type WorkflowDeps } from './context.js';
import { createExecutor } from './executor.js';
import { workflowMigrations } from './migrations.js';
import { registerWorkflowRoutes } from './routes.js';
import { workflowPoliciesSeed, workflowsSeed } from './seed.js';
import { createWorkflowService } from './service.js';

export const workflowsFamily = defineFamily<WorkflowDeps>({
  name: 'workflows',
  migrations: workflowMigrations,
  seed: [workflowsSeed, workflowPoliciesSeed],
  register(app: FastifyInstance, deps: WorkflowDeps) {
    const c = deps.config.workflows;
    const executor = c.executor ? createExecutor({ store: deps.store, logger: deps.logger, leaseMs: c.leaseMs, pollMs: c.pollMs, slots: c.slots }) : undefined;
    const service = createWorkflowService({ store: deps.store, forceCancelAfterMs: c.forceCancelAfterMs, wake: () => executor?.wake() });
    if (executor) {
      app.addHook('onReady', async () => executor.start());
      app.addHook('onClose', async () => executor.stop());
    }
    registerWorkflowRoutes(app, { service, store: deps.store, limiter: deps.limiter, buckets: bucketsOf(c.rateLimits) });
  },
});

export type { WorkflowDeps };
