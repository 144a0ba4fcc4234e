/**
 * Access, declared on every route and enforced here, once: a route states
 * what it guards (nothing, any credential, the organization or agent in its
 * path, the typed key's own organization), the scope that grants it, the
 * rate-limit bucket it counts in, a switch that can turn its family off, and
 * what an archived organization is answered (`onArchivedOrg`, kernel/archived.ts).
 * The kernel authenticates before the body is read (an unauthenticated
 * request costs its headers only), checks in the order the spec's answers
 * need, and hands the handler the principal and the resource. A route that
 * declares nothing cannot be registered: the API does not start.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import { authenticate, authorizeAgent, authorizeOrgScopes, isPerson, scopesSatisfy, type Principal, type ScopeRule } from './auth.js';
import { insufficientScope, notProjected } from './errors.js';
import type { Bucket, RateLimiter } from './rate-limit.js';
import { isCatalogued } from './scopes.js';
import { archivedOrgRuleOf, refuseIfArchived, type ArchivedOrgRule } from './archived.js';

/** Ids in paths: anything else names no resource a credential can see. */
export const RESOURCE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export type Access =
  /** Operator endpoints and documents: no credential. */
  | { resource: 'public' }
  /** Any valid credential. */
  | { resource: 'authenticated'; limit?: Limit; available?: Availability }
  /** The organization in the path (`:orgId`), seen by the credential and granted `scope`. */
  | { resource: 'org'; scope: ScopeRule; limit?: Limit; available?: Availability; onArchivedOrg?: ArchivedOrgRule }
  /**
   * The agent in the path (`:agentId`), seen by the credential and granted `scope`. `unseenByPerson`:
   * what a person (a session, or a legacy key acting as its user) is answered for an agent it
   * cannot see, where the family's spec gives a not-found for it; scoped keys always get
   * RESOURCE_NOT_PROJECTED.
   */
  | { resource: 'agent'; scope: ScopeRule; limit?: Limit; available?: Availability; unseenByPerson?: (agentId: string) => AppError; onArchivedOrg?: ArchivedOrgRule }
  /** A typed API key's own organization, with `scope` granted to the key itself (no person acts here). */
  | { resource: 'key-org'; scope: ScopeRule; limit?: Limit; available?: Availability; onArchivedOrg?: ArchivedOrgRule };

/**
 * A rate-limit bucket: per client address (counted first, before authentication: a client without
 * a valid credential spends its address's budget too, and a refused one costs no store lookup), per
 * credential (counted right after authentication) or per resource (counted once the resource is
 * authorized: counting first would let anyone probe another organization's budget). The address is
 * fastify's `req.ip`: the socket's peer, or the forwarded client behind a proxy TRUST_PROXY names.
 */
export interface Limit {
  per: 'address' | 'credential' | 'resource';
  bucket: (req: FastifyRequest) => Bucket;
}

/** A family switched off answers this (for example 404 while drains are disabled); undefined: on. */
export type Availability = () => AppError | undefined;

/** What the kernel established, for the handler. */
export interface Granted {
  principal: Principal;
  /** The organization the request acts on (the path's, the agent's, or the key's). */
  orgId?: string;
  agentId?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    granted: Granted | null;
  }
}

/** The principal and resource of a request whose route declared a guarded access. */
export function grantedOf(req: FastifyRequest): Granted {
  if (!req.granted) throw new AppError(500, 'ACCESS_NOT_ESTABLISHED', 'this route declared no guarded access');
  return req.granted;
}

export interface AccessKernelDeps {
  store: KernelStore;
  limiter: RateLimiter;
  /** After this instant deprecated scopes are refused (spec 01 part 5.6). */
  deprecatedScopesSunset: Date;
}

/** Installs the declaration check and the enforcement; call before any route is registered. */
export function installAccess(app: FastifyInstance, deps: AccessKernelDeps): void {
  app.decorateRequest('granted', null);
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (!access) {
      throw new AppError(500, 'ROUTE_ACCESS_UNDECLARED', `${String(route.method)} ${route.url} declares no access: every route states what guards it (src/api/kernel/access.ts)`);
    }
    if ('scope' in access) {
      for (const scope of [access.scope.required, access.scope.deprecated]) {
        if (scope !== undefined && !isCatalogued(scope)) {
          throw new AppError(500, 'ROUTE_SCOPE_UNKNOWN', `${String(route.method)} ${route.url} names the scope ${scope}, which no family declares (src/api/kernel/scopes.ts)`);
        }
      }
    }
    if (access.resource === 'public') {
      // The API document says so: no credential (the document's default is bearer).
      route.schema = { ...(route.schema ?? {}), security: [] } as typeof route.schema;
      return;
    }
    const enforce: onRequestHookHandler = async (req, reply) => {
      req.granted = await establish(deps, access, req, reply);
    };
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [enforce, ...own];
  });
}

async function establish(deps: AccessKernelDeps, access: Exclude<Access, { resource: 'public' }>, req: FastifyRequest, reply: FastifyReply): Promise<Granted> {
  if (access.limit?.per === 'address') await deps.limiter.enforce(access.limit.bucket(req), `ip:${req.ip}`, reply);
  const principal = await authenticate(req, deps.store);
  if (access.limit?.per === 'credential') await deps.limiter.enforce(access.limit.bucket(req), principal.credentialId, reply);
  const off = access.available?.();
  if (off) throw off;
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  let granted: Granted;
  switch (access.resource) {
    case 'authenticated':
      granted = { principal };
      break;
    case 'key-org': {
      const rule = access.scope;
      if (principal.scopes === null || !scopesSatisfy(principal.scopes, rule.required)) {
        throw insufficientScope('organization', principal.keyOrgId ?? principal.userId, rule.required);
      }
      granted = { principal, orgId: principal.keyOrgId! };
      break;
    }
    case 'org': {
      const orgId = params.orgId ?? '';
      // A malformed id names no organization this credential can see: the same answer as any other.
      if (!RESOURCE_ID.test(orgId)) throw notProjected('organization', orgId.slice(0, 128), access.scope.required);
      const { deprecatedScope } = await authorizeOrgScopes(deps.store, principal, orgId, withSunset(access.scope, deps));
      if (deprecatedScope) markDeprecated(reply, deps.deprecatedScopesSunset, access.scope.required, deprecatedScope);
      granted = { principal, orgId };
      break;
    }
    case 'agent': {
      const agentId = params.agentId ?? '';
      const unseen = (e: AppError): AppError => (access.unseenByPerson && isPerson(principal) ? access.unseenByPerson(agentId.slice(0, 128)) : e);
      if (!RESOURCE_ID.test(agentId)) throw unseen(notProjected('agent', agentId.slice(0, 128), access.scope.required));
      const { orgId, deprecatedScope } = await authorizeAgent(deps.store, principal, agentId, withSunset(access.scope, deps)).catch((e: unknown) => {
        throw e instanceof AppError && e.code === 'RESOURCE_NOT_PROJECTED' ? unseen(e) : e;
      });
      if (deprecatedScope) markDeprecated(reply, deps.deprecatedScopesSunset, access.scope.required, deprecatedScope);
      granted = { principal, orgId, agentId };
      break;
    }
  }
  // The organization acted on, once the credential may see it (kernel/archived.ts); its mutations are not counted.
  if (access.resource !== 'authenticated' && archivedOrgRuleOf(access.onArchivedOrg, req.method) === 'refuse') await refuseIfArchived(deps.store, granted.orgId!);
  if (access.limit?.per === 'resource') await deps.limiter.enforce(access.limit.bucket(req), granted.orgId ?? principal.credentialId, reply);
  return granted;
}

/** A deprecated scope is accepted until the deployment's sunset (DEPRECATED_SCOPES_SUNSET), the same for every route. */
const withSunset = (rule: ScopeRule, deps: AccessKernelDeps): ScopeRule =>
  rule.deprecated !== undefined ? { ...rule, sunset: deps.deprecatedScopesSunset } : rule;

/**
 * Marks an answer deprecated. `scope`: the deprecated scope that authorized it (adds Sunset and a
 * Warning naming it and its replacement); without it, a deprecated parameter (only Deprecation).
 */
export function markDeprecated(reply: FastifyReply, sunset: Date, replacement: string, scope?: string): void {
  reply.header('Deprecation', 'true');
  if (scope !== undefined) {
    reply.header('Sunset', sunset.toUTCString());
    reply.header('Warning', `299 - "The ${scope} scope is deprecated for this route; use ${replacement}"`);
  }
}

/** Marks an answer that read deprecated body fields (spec 01 part 9.3): Deprecation, Sunset, and a Warning naming them and their replacement. */
export function markDeprecatedFields(reply: FastifyReply, sunset: Date, fields: readonly string[], replacement: string): void {
  reply.header('Deprecation', 'true');
  reply.header('Sunset', sunset.toUTCString());
  const named = fields.join(' and ');
  reply.header('Warning', `299 - "The ${named} field${fields.length > 1 ? 's are' : ' is'} deprecated; use ${replacement}"`);
}
