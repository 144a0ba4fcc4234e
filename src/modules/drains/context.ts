/**
 * What every drain route shares: its dependencies, the access it declares
 * (enforced by the kernel: bearer auth, the deployment switch, the
 * organization's visibility, the sensitive `logs:manage` scope, the
 * organization's rate-limit bucket), and the drain lookup.
 */
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.js';
import type { KernelStore } from '../../store/kernel.js';
import type { DrainTables } from './tables/index.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Drain } from '../../model/drain.js';
import { auditActorOf, type Principal } from '../../api/kernel/auth.js';
import { DrainErrors, drainNotFound } from './errors.js';
import type { Bucket, RateLimiter } from '../../api/kernel/rate-limit.js';
import { grantedOf, RESOURCE_ID, type Access } from '../../api/kernel/access.js';
import { defineScopes } from '../../api/kernel/scopes.js';
import type { Actor } from '../../audit/drain-audit.js';
import type { DrainParams } from './schemas.js';
import type { DrainReadCache } from './read-cache.js';

export const MANAGE_SCOPE = 'logs:manage';

defineScopes('drains', {
  [MANAGE_SCOPE]: { sensitive: true, description: 'every drain route, deliveries and the drain audit included (spec 01 part 5.5)' },
});
export const DRAINS_BASE = '/admin/orgs/:orgId/log-drains';

export interface DrainDeps {
  /**
   * The family's slice of the configuration (./config.ts), and the settings it shares with the
   * delivery engine: the switch, the endpoint allow list, the change notifications and the quota.
   */
  config: Pick<Config, 'drains' | 'logDrainsEnabled' | 'endpointAllowHosts' | 'drainConfigListen' | 'quota' | 'logRetentionDays'>;
  /** The kernel store: credentials, the audit log, units of work. */
  store: KernelStore;
  /** The drain tables (modules/drains/tables/), which the delivery engine writes too. */
  drainTables: DrainTables;
  limiter: RateLimiter;
  logger: Logger;
}

export type { OrgParams, DrainParams } from './schemas.js';

/** The audit entry's actor: a typed key as itself, a person as the user (kernel/auth.ts). */
export const actorOf = (p: Principal): Actor => auditActorOf(p);

/** The drain routes' budgets per organization (spec 01 part 8: 300 reads, 60 mutations a minute). */
export function drainBuckets(limits: { readPerMinute: number; mutatePerMinute: number }): { read: Bucket; mutate: Bucket } {
  return {
    read: { name: 'log-drains-read', limit: limits.readPerMinute, windowMs: 60_000, error: DrainErrors.DRAIN_RATE_LIMITED },
    mutate: { name: 'log-drains-mutate', limit: limits.mutatePerMinute, windowMs: 60_000, error: DrainErrors.DRAIN_RATE_LIMITED },
  };
}

/**
 * The access every drain route declares: the organization in the path with the sensitive
 * `logs:manage` scope, 404 while drains are off (LOG_DRAINS_ENABLED), and the organization's
 * read or mutation bucket (spec 01 part 8); `posts`, a bucket of their own for a route's POSTs
 * (replay requests).
 */
export function drainAccess(deps: Pick<DrainDeps, 'config'>, posts?: Bucket): Access {
  const buckets = drainBuckets(deps.config.drains.rateLimits);
  return {
    resource: 'org',
    scope: { required: MANAGE_SCOPE },
    available: () => (deps.config.logDrainsEnabled ? undefined : drainNotFound()),
    limit: { per: 'resource', bucket: (req) => (req.method === 'GET' ? buckets.read : req.method === 'POST' && posts ? posts : buckets.mutate) },
  };
}

/** The principal of a drain request (established by the kernel from drainAccess). */
export const principalOf = (req: FastifyRequest): Principal => grantedOf(req).principal;

/** The drain of the path, from the drain table or, for a read, from the read cache (read-cache.ts). */
export async function loadDrain(tables: Pick<DrainTables, 'drains'>, params: DrainParams, reads?: Pick<DrainReadCache, 'drain'>): Promise<Drain> {
  if (!RESOURCE_ID.test(params.drainId)) throw drainNotFound();
  const drain = await (reads ? reads.drain(params.orgId, params.drainId) : tables.drains.get(params.orgId, params.drainId));
  if (!drain) throw drainNotFound();
  return drain;
}
