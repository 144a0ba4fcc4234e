/**
 * What every log read route shares: bearer auth, the per-credential rate
 * limit (120 a minute by default), the `logs:read` scope with its
 * deprecated alternatives (spec 01 part 5.6) and the headers those earn.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../config/config.js';
import type { Store } from '../../../store/store.js';
import { authenticate, authorizeAgent, authorizeOrgScopes, hiddenAgents, type Principal, type ScopeRule } from '../../auth.js';
import { notProjected } from '../../errors.js';
import type { Bucket, RateLimiter } from '../../rate-limit.js';
import type { LogQuery } from '../../../store/logs-repo.js';

export const READ_SCOPE = 'logs:read';
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export interface LogDeps {
  config: Config;
  store: Store;
  limiter: RateLimiter;
}

/** Deprecated scopes of spec 01 part 5.6, per route. */
export const DEPRECATED_SCOPE = {
  agentLogs: 'knowledge:read',
  orgLogs: 'analytics:read',
} as const;

export function logsBucket(config: Config): Bucket {
  return { name: 'logs-read', limit: config.logsReadPerMinute, windowMs: 60_000, code: 'RATE_LIMITED' };
}

/**
 * Marks an answer deprecated. `scope`: the deprecated scope that authorized
 * it (adds Sunset and a Warning naming it); without it, a deprecated
 * parameter (only Deprecation).
 */
export function markDeprecated(reply: FastifyReply, config: Config, scope?: string): void {
  reply.header('Deprecation', 'true');
  if (scope !== undefined) {
    reply.header('Sunset', config.deprecatedScopesSunset.toUTCString());
    reply.header('Warning', `299 - "The ${scope} scope is deprecated for this route; use ${READ_SCOPE}"`);
  }
}

async function enter(deps: LogDeps, req: FastifyRequest, reply: FastifyReply, bucket: Bucket): Promise<Principal> {
  const principal = await authenticate(req, deps.store);
  await deps.limiter.enforce(bucket, principal.credentialId, reply);
  return principal;
}

/** One agent's logs: the agent must be visible to the credential. */
export function createAgentGuard(deps: LogDeps) {
  const bucket = logsBucket(deps.config);
  const rule: ScopeRule = { required: READ_SCOPE, deprecated: DEPRECATED_SCOPE.agentLogs, sunset: deps.config.deprecatedScopesSunset };
  return async (req: FastifyRequest<{ Params: { agentId: string } }>, reply: FastifyReply): Promise<LogQuery> => {
    const principal = await enter(deps, req, reply, bucket);
    const { agentId } = req.params;
    // A malformed id names no agent this credential can see: the same answer as any other.
    if (!ID_PATTERN.test(agentId)) throw notProjected('agent', agentId.slice(0, 128), READ_SCOPE);
    const { orgId, deprecatedScope } = await authorizeAgent(deps.store, principal, agentId, rule);
    if (deprecatedScope) markDeprecated(reply, deps.config, deprecatedScope);
    return { orgId, agentId };
  };
}

/** Every agent of an organization the credential may see (private agents need a grant). */
export function createOrgGuard(deps: LogDeps) {
  const bucket = logsBucket(deps.config);
  const rule: ScopeRule = { required: READ_SCOPE, deprecated: DEPRECATED_SCOPE.orgLogs, sunset: deps.config.deprecatedScopesSunset };
  return async (req: FastifyRequest<{ Params: { orgId: string } }>, reply: FastifyReply): Promise<LogQuery> => {
    const principal = await enter(deps, req, reply, bucket);
    const { orgId } = req.params;
    if (!ID_PATTERN.test(orgId)) throw notProjected('organization', orgId.slice(0, 128), READ_SCOPE);
    const { deprecatedScope } = await authorizeOrgScopes(deps.store, principal, orgId, rule);
    if (deprecatedScope) markDeprecated(reply, deps.config, deprecatedScope);
    return { orgId, hiddenAgents: await hiddenAgents(deps.store, principal, orgId) };
  };
}
