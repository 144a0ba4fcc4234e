/**
 * What every log read route shares: the access it declares (enforced by the
 * kernel: bearer auth, the per-credential rate limit of 120 a minute by
 * default, the `logs:read` scope with its deprecated alternatives of spec 01
 * part 5.6 and the headers those earn) and the query it may run.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.js';
import type { KernelStore } from '../../store/kernel.js';
import { hiddenAgents } from '../../api/kernel/auth.js';
import { grantedOf, markDeprecated as markDeprecatedAnswer, type Access } from '../../api/kernel/access.js';
import type { Bucket, RateLimiter } from '../../api/kernel/rate-limit.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { defineScopes } from '../../api/kernel/scopes.js';
import type { LogQuery, LogReads } from './repository.js';

export const READ_SCOPE = 'logs:read';

export interface LogDeps {
  /** The read budget and the deprecated scopes' sunset. */
  config: Pick<Config, 'logsReadPerMinute' | 'deprecatedScopesSunset'>;
  store: KernelStore;
  /** The platform copy's reads (the delivery engine writes it: repository.ts). */
  logs: LogReads;
  limiter: RateLimiter;
}

// `automations:read`, the skill log route's deprecated alternative, is a platform scope (kernel/scopes.ts).
defineScopes('logs', {
  [READ_SCOPE]: { description: 'the log read routes (an ordinary read scope, covered by *:read)' },
  'knowledge:read': { deprecated: true, description: "one agent's logs, until the sunset (spec 01 part 5.6)" },
  'analytics:read': { deprecated: true, description: "an organization's logs and export, until the sunset" },
});

/** Deprecated scopes of spec 01 part 5.6, per route. */
export const DEPRECATED_SCOPE = {
  agentLogs: 'knowledge:read',
  skillLogs: 'automations:read',
  orgLogs: 'analytics:read',
} as const;

export function logsBucket(config: Pick<Config, 'logsReadPerMinute'>): Bucket {
  return { name: 'logs-read', limit: config.logsReadPerMinute, windowMs: 60_000, error: KernelErrors.RATE_LIMITED };
}

/**
 * The access of one agent's logs, or of one skill's logs on an agent (the same but for the
 * deprecated alternative): the agent must be visible to the credential.
 */
export function agentLogsAccess(deps: LogDeps, deprecated: string = DEPRECATED_SCOPE.agentLogs): Access {
  const bucket = logsBucket(deps.config);
  return {
    resource: 'agent',
    scope: { required: READ_SCOPE, deprecated },
    limit: { per: 'credential', bucket: () => bucket },
  };
}

/** The access of an organization's logs (every agent the credential may see; private ones need a grant). */
export function orgLogsAccess(deps: LogDeps): Access {
  const bucket = logsBucket(deps.config);
  return {
    resource: 'org',
    scope: { required: READ_SCOPE, deprecated: DEPRECATED_SCOPE.orgLogs },
    limit: { per: 'credential', bucket: () => bucket },
  };
}

/** What a log read may return, from what the kernel established. */
export async function logQueryOf(deps: LogDeps, req: FastifyRequest): Promise<LogQuery> {
  const { principal, orgId, agentId } = grantedOf(req);
  if (agentId !== undefined) return { orgId: orgId!, agentId };
  return { orgId: orgId!, hiddenAgents: await hiddenAgents(deps.store, principal, orgId!) };
}

/** A deprecated parameter (only Deprecation): see kernel/access.ts for deprecated scopes. */
export function markDeprecated(reply: FastifyReply, config: Pick<Config, 'deprecatedScopesSunset'>, scope?: string): void {
  markDeprecatedAnswer(reply, config.deprecatedScopesSunset, READ_SCOPE, scope);
}
