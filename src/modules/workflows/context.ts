/**
 * What every workflow route shares: its dependencies, the scopes of spec 03
 * part 5 (contract W7), the access each route declares (the agent in the
 * path), and the wf-* rate-limit buckets of part 8, counted per calling user.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WorkflowsConfig } from './config.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Access } from '../../api/kernel/access.js';
import { grantedOf } from '../../api/kernel/access.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import type { Bucket, RateLimiter } from '../../api/kernel/rate-limit.js';
import { defineScopes } from '../../api/kernel/scopes.js';
import type { Vendors } from '../../vendors/index.js';
import type { ChannelNotificationPort, FamilyMetrics } from '../platform-deps.js';

export const READ_SCOPE = 'workflows:read';
export const READ_OUTPUTS_SCOPE = 'workflows:read-outputs';
export const WRITE_SCOPE = 'workflows:write';
export const EXECUTE_SCOPE = 'workflows:execute';

defineScopes('workflows', {
  [READ_SCOPE]: { description: "read an agent's workflow definitions and runs" },
  [READ_OUTPUTS_SCOPE]: { description: "read the payloads (input, output) of an agent's workflow runs" },
  [WRITE_SCOPE]: { description: 'start runs of an inline graph or script' },
  [EXECUTE_SCOPE]: { description: "start an agent's workflow runs and act on them (cancel)" },
});

export const WORKFLOWS_BASE = '/workflows/:agentId';

export interface WorkflowDeps {
  /** The family's slice of the configuration (./config.ts), nothing else of it. */
  config: { readonly workflows: WorkflowsConfig };
  store: KernelStore;
  logger: Logger;
  limiter: RateLimiter;
  /** The mail port the run-end emails go through. */
  vendors: Pick<Vendors, 'mail'>;
  /** The channels family's port the run-end channel notifications and callbacks go through. */
  channelNotifications: ChannelNotificationPort;
  /** The run gauges, step, claim and notification counters on /metrics. */
  metrics: FamilyMetrics;
}

export const onAgent = (required: string): Access => ({ resource: 'agent', scope: { required } });

const WINDOW_MS = 60_000;
const bucket = (name: string, limit: number): Bucket => ({ name, limit, windowMs: WINDOW_MS, error: KernelErrors.RATE_LIMITED, style: 'named' });

/** Spec 03 part 8 (the limits are the deployment's: WORKFLOW_RATE_LIMIT_*_PER_MIN, the spec's by default). */
export const bucketsOf = (limits: { read: number; start: number; batch: number; mutate: number }) => ({
  read: bucket('wf-read', limits.read),
  start: bucket('wf-start', limits.start),
  batch: bucket('wf-batch', limits.batch),
  mutate: bucket('wf-mutate', limits.mutate),
});
export type Buckets = ReturnType<typeof bucketsOf>;

/**
 * A route's wf-* bucket, counted per calling user (a key counts against its owner, contract W7):
 * runs after the kernel's access check, so a refused request is never counted.
 */
export const countIn = (limiter: RateLimiter, b: Bucket) => async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
  await limiter.enforce(b, `user:${grantedOf(req).principal.userId}`, reply);
};
