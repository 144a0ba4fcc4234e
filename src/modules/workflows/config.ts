/**
 * The workflow runtime's slice of the configuration (`config.workflows`; docs/api-workflows.md):
 * cancel escalation, the executor this process runs, and the run-end notification sender.
 */
import { Type, type Static } from '@sinclair/typebox';
import { bool, int, type DeepReadonly } from '../../config/env-schema.js';

export const workflowsConfigSchema = Type.Object({
  forceCancelAfterMs: int('WORKFLOW_FORCE_CANCEL_AFTER_MS', 60_000, { min: 0, max: 86_400_000 }, 'from a cancel request to the run\'s `forceAvailableAt`'),
  executor: bool('WORKFLOW_EXECUTOR', true, 'whether this process (`start`, `serve` or `worker`) runs a workflow executor; `false`: an API only serves the routes'),
  leaseMs: int('WORKFLOW_LEASE_MS', 30_000, { min: 100, max: 3_600_000 }, 'how long an executor holds a run without renewing; a dead executor\'s runs are taken over after it'),
  pollMs: int('WORKFLOW_POLL_MS', 500, { min: 10, max: 60_000 }, 'how often an idle executor looks for runs started by other processes'),
  slots: int('WORKFLOW_EXECUTOR_SLOTS', 8, { min: 1, max: 1000 }, 'runs one executor executes at a time'),
  /** The wf-read, wf-start, wf-batch and wf-mutate buckets (spec 03 part 8). */
  rateLimits: Type.Object({
    read: int('WORKFLOW_RATE_LIMIT_READ_PER_MIN', 600, { min: 1 }, 'workflow read requests a minute per calling user (wf-read)'),
    start: int('WORKFLOW_RATE_LIMIT_START_PER_MIN', 30, { min: 1 }, 'run starts a minute per calling user (wf-start)'),
    batch: int('WORKFLOW_RATE_LIMIT_BATCH_PER_MIN', 5, { min: 1 }, 'batch starts a minute per calling user (wf-batch)'),
    mutate: int('WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN', 60, { min: 1 }, 'run changes (cancel, resume) a minute per calling user (wf-mutate)'),
  }),
  /** The run-end notification sender beside each executor (docs/api-workflows.md, notifications). */
  notify: Type.Object({
    leaseMs: int('WORKFLOW_NOTIFY_LEASE_MS', 120_000, { min: 100, max: 3_600_000 }, 'how long a sender holds a notification it claimed; a dead sender\'s are sent by another after it'),
    retryBaseMs: int('WORKFLOW_NOTIFY_RETRY_BASE_MS', 2000, { min: 10, max: 3_600_000 }, 'the first backoff after a vendor failure (doubling each time)'),
    retryMaxMs: int('WORKFLOW_NOTIFY_RETRY_MAX_MS', 300_000, { min: 10, max: 86_400_000 }, 'the longest backoff after a vendor failure'),
    maxAttempts: int('WORKFLOW_NOTIFY_MAX_ATTEMPTS', 8, { min: 1, max: 100 }, 'sends tried before a notification is recorded failed'),
  }),
});

export type WorkflowsConfig = DeepReadonly<Static<typeof workflowsConfigSchema>>;
