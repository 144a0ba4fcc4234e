/**
 * The workflows family's background work, without its routes: the durable executor and the
 * run-end notification sender beside it. The API processes run it through the family
 * (index.ts); a `logdrain worker` runs it beside its pipeline and loads none of the API
 * (src/modules/background.ts).
 */
import type { WorkflowDeps } from './context.js';
import { createExecutor } from './executor.js';
import { createNotifier } from './notifier.js';
import { createWorkflowsRepo } from './repository.js';

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
