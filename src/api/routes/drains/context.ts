/**
 * What every drain route shares: its dependencies and the guard that runs
 * first on each request: bearer auth, the deployment switch (404 while
 * drains are off), the organization's visibility, the sensitive
 * `logs:manage` scope, and the organization's rate-limit bucket.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../config/config.js';
import type { Store } from '../../../store/store.js';
import type { Transport } from '../../../deliver/transport.js';
import type { Deliverer } from '../../../deliver/deliverer.js';
import type { Logger } from '../../../telemetry/logger.js';
import type { Drain } from '../../../model/drain.js';
import { authenticate, authorizeOrg, type Principal } from '../../auth.js';
import { drainNotFound, notProjected } from '../../errors.js';
import { drainBuckets, type RateLimiter } from '../../rate-limit.js';
import type { Actor } from '../../../audit/drain-audit.js';

export const MANAGE_SCOPE = 'logs:manage';
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const DRAINS_BASE = '/admin/orgs/:orgId/log-drains';

export interface DrainDeps {
  config: Config;
  store: Store;
  transport: Transport;
  /** Sends test batches through the real delivery path. */
  deliverer: Deliverer;
  limiter: RateLimiter;
  logger: Logger;
}

export interface OrgParams {
  orgId: string;
}
export interface DrainParams extends OrgParams {
  drainId: string;
}

export const actorOf = (p: Principal): Actor => ({ type: 'user', id: p.userId });

export function createDrainGuard(deps: DrainDeps) {
  const buckets = drainBuckets(deps.config.drainRateLimits);
  return async function guard(req: FastifyRequest<{ Params: OrgParams }>, reply: FastifyReply): Promise<Principal> {
    const principal = await authenticate(req, deps.store);
    if (!deps.config.logDrainsEnabled) throw drainNotFound();
    const { orgId } = req.params;
    // A malformed id names no organization this credential can see: same answer as any other.
    if (!ID_PATTERN.test(orgId)) throw notProjected('organization', orgId.slice(0, 128), MANAGE_SCOPE);
    await authorizeOrg(deps.store, principal, orgId, MANAGE_SCOPE);
    await deps.limiter.enforce(req.method === 'GET' ? buckets.read : buckets.mutate, orgId, reply);
    return principal;
  };
}

export async function loadDrain(store: Store, params: DrainParams): Promise<Drain> {
  if (!ID_PATTERN.test(params.drainId)) throw drainNotFound();
  const drain = await store.drains.get(params.orgId, params.drainId);
  if (!drain) throw drainNotFound();
  return drain;
}
