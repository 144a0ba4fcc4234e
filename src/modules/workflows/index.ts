/**
 * The workflows family (spec 03 parts 2.4, 3, 4.3, 5, 7, 8): deployed
 * definitions from the seed, runs started, listed, read and cancelled, and
 * the durable executor that moves runs through the graph language.
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import { bucketsOf, type WorkflowDeps } from './context.js';
import { createExecutor } from './executor.js';
import { createNotifier } from './notifier.js';
import { createRunWaker } from './wake.js';
import { workflowMigrations } from './migrations.js';
import { registerWorkflowRoutes } from './routes.js';
import { workflowPoliciesSeed, workflowsSeed } from './seed.js';
import { createWorkflowService } from './service.js';
import { createRollups } from './rollup.js';
import { createRecovery } from './recovery.js';
import { createWorkflowsRepo } from './repository.js';
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

/** A process's workflow executor and, beside it, the sender of the run-end notifications. */
export interface WorkflowExecutor {
  start(): Promise<void>;
  /** A run was queued: look for it now. */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * An executor on this process's store, as configured (WORKFLOW_LEASE_MS, WORKFLOW_POLL_MS,
 * WORKFLOW_EXECUTOR_SLOTS), with the notification sender (WORKFLOW_NOTIFY_*) it wakes when a run
 * ends: the API's (`start`, `serve`) through the family, a `logdrain worker`'s through the process
 * composition (src/commands/run.ts).
 */
export function createWorkflowExecutor(deps: Pick<WorkflowDeps, 'config' | 'store' | 'logger' | 'vendors' | 'channelNotifications' | 'metrics'>): WorkflowExecutor {
  const c = deps.config.workflows;
  const repo = createWorkflowsRepo(deps.store.sql);
  deps.metrics.workflowRunsFrom(() => repo.openRunCounts());
  const notifier = createNotifier({
    store: deps.store, logger: deps.logger, mail: deps.vendors.mail, channels: deps.channelNotifications, metrics: deps.metrics,
    leaseMs: c.notify.leaseMs, pollMs: c.pollMs, retryBaseMs: c.notify.retryBaseMs, retryMaxMs: c.notify.retryMaxMs, maxAttempts: c.notify.maxAttempts,
  });
  const executor = createExecutor({ store: deps.store, logger: deps.logger, metrics: deps.metrics, leaseMs: c.leaseMs, pollMs: c.pollMs, slots: c.slots, onRunEnded: () => notifier.wake() });
  return {
    async start() {
      notifier.start();
      await executor.start();
    },
    wake: () => executor.wake(),
    async stop() {
      await executor.stop();
      await notifier.stop();
    },
  };
}

/** The workflows family's part of a template install (platform-deps.ts), for the composition root. */
export function createWorkflowsTemplatePort(deps: { store: KernelStore; logger: Logger }): WorkflowTemplatePort {
  const wake = createRunWaker(deps.store.sql, deps.logger, () => localExecutors.get(deps.store)?.forEach((w) => w()));
  return createWorkflowTemplatePort({ wake });
}

export type { WorkflowDeps };
