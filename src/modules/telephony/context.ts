/**
 * What every telephony route shares: its dependencies, its scopes (spec 02
 * part 5; `telephony:provision` is one of the platform's sensitive scopes,
 * kernel/scopes.ts), the access each route declares (contract telephony T2),
 * and who acts.
 */
import type { FastifyRequest } from 'fastify';
import type { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Config } from '../../config/config.js';
import type { Vendors } from '../../vendors/index.js';
import type { Principal } from '../../api/kernel/auth.js';
import { grantedOf, type Access } from '../../api/kernel/access.js';
import { defineScopes } from '../../api/kernel/scopes.js';
import type { Bucket, RateLimiter } from '../../api/kernel/rate-limit.js';
import type { Logger } from '../../telemetry/logger.js';
import type { FamilyMetrics } from '../platform-deps.js';
import { userEmail } from './repository.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';

export const SCOPES = {
  read: 'telephony:read',
  write: 'telephony:write',
  manage: 'telephony:manage',
  /** Sensitive: granted by its exact name only (`telephony:*` never covers it). */
  provision: 'telephony:provision',
} as const;

defineScopes('telephony', {
  [SCOPES.read]: { description: 'list and inspect SIP trunks, their credentials, phone numbers, RCS agents, voices and their versions' },
  [SCOPES.write]: { description: 'create trunks, ACL entries and digest users, rotate passwords, link agents; suspend, reactivate and configure numbers; register, update and link RCS agents and check reachability; create, version, publish, update and provision voices' },
  [SCOPES.manage]: { description: 'delete trunks, ACL entries, digest users and agent links; release numbers; suspend and unlink RCS agents; deactivate voices' },
});

export interface TelephonyDeps {
  config: Pick<Config, 'rcsBulkChecksPerMinute'>;
  store: KernelStore;
  vendors: Pick<Vendors, 'carrier' | 'rcs' | 'voiceCalls' | 'media'>;
  /** The kernel's rate-limit buckets (the dispatch limit). */
  limiter: RateLimiter;
  /** What a route must report without failing its answer (a placed call whose record was not written). */
  logger: Logger;
  /** Dispatches, voice sessions and vendor errors (/metrics). */
  metrics: FamilyMetrics;
  /** The kernel's read caches (api/kernel/read-cache.ts): the trunk and voice lists. */
  reads: ReadCaches;
}

/**
 * The organization in the path, with `scope` (independent scopes: write and manage do not imply read);
 * `bucket`: the organization's rate-limit bucket the route counts in.
 */
export const orgAccess = (scope: string, bucket?: Bucket): Extract<Access, { resource: 'org' }> => ({
  resource: 'org', scope: { required: scope }, ...(bucket !== undefined ? { limit: { per: 'resource', bucket: () => bucket } } : {}),
});

/**
 * The agent in the path (`:agentId`, the voice routes), with `scope`. A person is answered `404 Agent
 * not found` for an agent it cannot see; a scoped key RESOURCE_NOT_PROJECTED (contract telephony T2).
 */
export const agentAccess = (scope: string, unseenByPerson: () => AppError): Access => ({ resource: 'agent', scope: { required: scope }, unseenByPerson });

/** Every route of the family answers in spec 02 part 7's shape. */
export const routeConfig = (access: Access) => ({ access, errorShape: 'telephony' as const });

export interface Actor {
  orgId: string;
  principal: Principal;
}

export function actorOf(req: FastifyRequest): Actor {
  const g = grantedOf(req);
  return { orgId: g.orgId!, principal: g.principal };
}

/** The agent in the path, as the kernel authorized it, and who acts (voice routes). */
export interface AgentActor extends Actor {
  agentId: string;
}

export function agentActorOf(req: FastifyRequest): AgentActor {
  const g = grantedOf(req);
  return { orgId: g.orgId!, principal: g.principal, agentId: g.agentId! };
}

/** The email of a user, when the store knows it. */
export async function emailOf(store: KernelStore, userId: string): Promise<string | undefined> {
  return userEmail(store.sql, userId);
}
