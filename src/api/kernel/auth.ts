/**
 * Bearer authentication and scope checks (spec 01 part 5).
 *
 * A credential is an API key (scoped, or legacy with `scopes: null` acting as
 * its owner) or a user session. Scoped keys hold explicit scopes; wildcards
 * (`logs:*`, `*:read`) cover their area except sensitive scopes, which only
 * an exact grant satisfies. Legacy keys and sessions act as the user: an
 * organization `owner` or `admin` holds every scope there, any other member
 * the read scopes (docs/api.md, Authentication).
 */
import type { FastifyRequest } from 'fastify';
import { hashToken } from '../../security/token-hash.js';
import { isSensitiveScope } from './scopes.js';
import { KernelErrors } from './error-registry.js';
import type { KernelStore } from '../../store/kernel.js';
import { tenancyEpoch } from '../../store/change-epochs.js';
import { BEARER_HINT, insufficientScope, notProjected, unauthorized } from './errors.js';

/** The sensitive scopes, as the scope catalogue knows them (kernel/scopes.ts). */
export const SENSITIVE_SCOPES: { has(scope: string): boolean } = { has: isSensitiveScope };

const isSensitive = isSensitiveScope;

export interface Principal {
  kind: 'api_key' | 'session';
  /** The user the credential belongs to (owner of a key, user of a session). */
  userId: string;
  /** Organization of an API key; sessions span the user's memberships. */
  keyOrgId: string | undefined;
  /** Scoped keys only; `null` means act as the user. */
  scopes: readonly string[] | null;
  agentGrants: readonly string[];
  /** A stable, non-secret label for rate-limit buckets and audit (hash prefix). */
  credentialId: string;
}

/**
 * Who an audit entry names for a request: a typed API key as itself (`api_key` and its non-secret
 * credential label, never the token), a person (a session, or a legacy key acting as its user) as
 * that user.
 */
export const auditActorOf = (p: Principal): { type: 'api_key' | 'user'; id: string } =>
  p.kind === 'api_key' && p.scopes !== null ? { type: 'api_key', id: p.credentialId } : { type: 'user', id: p.userId };

/** Does a scoped grant list satisfy `required`? */
export function scopesSatisfy(granted: readonly string[], required: string): boolean {
  if (granted.includes(required)) return true;
  if (isSensitive(required)) return false;
  const [area, action] = required.split(':');
  return granted.some((g) => g === `${area}:*` || (action !== undefined && g === `*:${action}`) || g === '*');
}

const ADMIN_ROLES = new Set(['owner', 'admin']);

/**
 * What a person (a session, or a legacy key acting as its owner) holds in an organization
 * (CONTRACT part 6): an admin every scope, sensitive ones included; a member every scope but
 * `org:manage` and the sensitive ones.
 */
function personHolds(role: string | undefined, scope: string): boolean {
  if (role === undefined) return false;
  if (ADMIN_ROLES.has(role)) return true;
  return scope !== 'org:manage' && !isSensitive(scope);
}

/** A person, as opposed to a typed API credential: human-only actions need one (spec 03 part 5). */
export const isPerson = (p: Principal): boolean => p.kind === 'session' || p.scopes === null;

/** Human-only actions answer a typed API credential with 403 APPROVAL_REQUIRES_HUMAN. */
export function requirePerson(p: Principal, action: string): void {
  if (!isPerson(p)) throw KernelErrors.APPROVAL_REQUIRES_HUMAN(`Only a person may ${action}; this credential is an API key.`);
}

/**
 * Credential, organization, membership and agent lookups are kept this long: a client flooding a
 * route with refused requests made every other client's requests wait behind its store lookups
 * (a 429 cost as much as an answer), and every request of every route needs them. A key revoked
 * or suspended, a membership or an organization changed in the store is seen within this time;
 * an agent or organization the API itself creates or removes (store tenancy-repo.ts) at once, since
 * an entry read before the tenancy counter moved is not trusted after it.
 */
export const CREDENTIAL_CACHE_MS = 2000;
const LOOKUP_CACHE_MAX = 10_000;
const lookups = new WeakMap<object, Map<string, { atMs: number; epoch: number; found: Promise<unknown> }>>();

/** `find()`'s answer for `key`, from the store at most once per CREDENTIAL_CACHE_MS (absent answers too). */
function briefly<T>(store: KernelStore, key: string, find: () => Promise<T>, nowMs = Date.now()): Promise<T> {
  let cache = lookups.get(store.auth);
  if (!cache) lookups.set(store.auth, (cache = new Map()));
  const epoch = tenancyEpoch();
  const hit = cache.get(key);
  if (hit && hit.epoch === epoch && nowMs - hit.atMs < CREDENTIAL_CACHE_MS) return hit.found as Promise<T>;
  if (cache.size >= LOOKUP_CACHE_MAX) cache.clear();
  const found = find();
  cache.set(key, { atMs: nowMs, epoch, found });
  // A failed lookup (the store away) is not kept.
  found.catch(() => cache.delete(key));
  return found;
}

type Lookup = { key: Awaited<ReturnType<KernelStore['auth']['findKey']>>; session: Awaited<ReturnType<KernelStore['auth']['findSession']>> | undefined };

/** The key or session of a token hash. */
const lookUp = (store: KernelStore, hash: string): Promise<Lookup> =>
  briefly(store, `token\u0000${hash}`, async () => {
    const key = await store.auth.findKey(hash);
    return { key, session: key ? undefined : await store.auth.findSession(hash) };
  });

const orgOf = (store: KernelStore, orgId: string) => briefly(store, `org\u0000${orgId}`, () => store.auth.org(orgId));
/** The organization, as the kernel looked it up to authorize a request (kept CREDENTIAL_CACHE_MS). */
export const organizationOf = orgOf;
const roleOf = (store: KernelStore, userId: string, orgId: string) => briefly(store, `role\u0000${userId}\u0000${orgId}`, () => store.auth.roleIn(userId, orgId));
const agentOf = (store: KernelStore, agentId: string) => briefly(store, `agent\u0000${agentId}`, () => store.auth.agent(agentId));
/**
 * The organizations a user is a member of (kept CREDENTIAL_CACHE_MS, as the role in one is): whose
 * private templates and skills a person's catalog reads show. The answer is shared: not to be changed.
 */
export const membershipsOf = (store: KernelStore, userId: string): Promise<readonly string[]> =>
  briefly(store, `orgs\u0000${userId}`, () => store.tenancy.membershipsOf(userId));
/**
 * The organizations whose private resources a caller sees: an API key's own; a person's
 * memberships (a session), from the lookup cache above. Once each and in order, so that the same
 * set is the same read-cache key.
 */
export const callerOrgsOf = async (store: KernelStore, p: Principal): Promise<string[]> =>
  p.kind === 'api_key' ? (p.keyOrgId ? [p.keyOrgId] : []) : [...new Set(await membershipsOf(store, p.userId))].sort();
/** The agent, as the kernel looked it up to authorize a request (kept CREDENTIAL_CACHE_MS, renewed at once after an agent write of this process). */
export const agentFactsOf = agentOf;

export async function authenticate(req: FastifyRequest, store: KernelStore): Promise<Principal> {
  const header = req.headers.authorization;
  // The scheme is case-insensitive (RFC 9110 section 11.1): `bearer` and `BEARER` are `Bearer`.
  const match = typeof header === 'string' ? /^Bearer ([\x21-\x7e]+)$/i.exec(header.trim()) : null;
  // The spec fixes the message (part 5); a header that is there but not `Bearer <token>` also gets a hint.
  if (!match) throw unauthorized('No token provided', undefined, typeof header === 'string' && header.trim() !== '' ? { hint: BEARER_HINT } : undefined);
  const token = match[1]!;
  const hash = hashToken(token);
  const { key, session } = await lookUp(store, hash);
  if (key) {
    if (key.status !== 'active') throw unauthorized('Invalid or expired token');
    return {
      kind: 'api_key', userId: key.ownerId, keyOrgId: key.orgId, scopes: key.scopes, agentGrants: key.agentGrants,
      credentialId: `key_${hash.slice(0, 16)}`,
    };
  }
  if (session) {
    if (session.revoked) throw unauthorized('Invalid or expired token', 'SESSION_REVOKED');
    return {
      kind: 'session', userId: session.userId, keyOrgId: undefined, scopes: null, agentGrants: [],
      credentialId: `ses_${hash.slice(0, 16)}`,
    };
  }
  throw unauthorized('Invalid or expired token');
}

export interface ScopeRule {
  required: string;
  /** A deprecated scope still accepted for this route (spec 01 part 5.6) until the sunset. */
  deprecated?: string | undefined;
  /** After this instant the deprecated scope is refused. */
  sunset?: Date | undefined;
}

/** Which scope authorizes the request: the required one, a deprecated one, or none. */
function scopeGranted(p: Principal, role: string | undefined, rule: ScopeRule): 'required' | 'deprecated' | undefined {
  if (p.scopes === null) return personHolds(role, rule.required) ? 'required' : undefined;
  if (scopesSatisfy(p.scopes, rule.required)) return 'required';
  const live = rule.sunset === undefined || Date.now() < rule.sunset.getTime();
  if (rule.deprecated && live && scopesSatisfy(p.scopes, rule.deprecated)) return 'deprecated';
  return undefined;
}

/**
 * Organization-scoped routes: the organization must be visible to the
 * credential (else RESOURCE_NOT_PROJECTED, the same for another org and a
 * nonexistent one), then the scope must be held (else INSUFFICIENT_SCOPE).
 * Returns the deprecated scope when that is what authorized the request.
 */
export async function authorizeOrgScopes(store: KernelStore, p: Principal, orgId: string, rule: ScopeRule): Promise<{ deprecatedScope?: string }> {
  const [org, role] = await Promise.all([orgOf(store, orgId), roleOf(store, p.userId, orgId)]);
  const visible = org !== undefined && (p.kind === 'api_key' ? p.keyOrgId === orgId && (p.scopes !== null || role !== undefined) : role !== undefined);
  if (!visible) throw notProjected('organization', orgId, rule.required);
  const granted = scopeGranted(p, role, rule);
  if (!granted) throw insufficientScope('organization', orgId, rule.required);
  return granted === 'deprecated' ? { deprecatedScope: rule.deprecated! } : {};
}


/**
 * Agent-scoped routes: an agent the credential cannot see (private without a
 * grant, of another organization, or nonexistent) answers the same
 * RESOURCE_NOT_PROJECTED; a visible agent without the scope, INSUFFICIENT_SCOPE.
 */
export async function authorizeAgent(store: KernelStore, p: Principal, agentId: string, rule: ScopeRule): Promise<{ orgId: string; deprecatedScope?: string }> {
  const agent = await agentOf(store, agentId);
  const role = agent ? await roleOf(store, p.userId, agent.orgId) : undefined;
  let visible = false;
  if (agent) {
    if (p.kind === 'api_key' && p.scopes !== null) {
      visible = p.keyOrgId === agent.orgId && (agent.visibility === 'org' || p.agentGrants.includes(agent.id));
    } else {
      visible = role !== undefined && (p.kind === 'session' || p.keyOrgId === agent.orgId);
    }
  }
  if (!agent || !visible) throw notProjected('agent', agentId, rule.required);
  const granted = scopeGranted(p, role, rule);
  if (!granted) throw insufficientScope('agent', agentId, rule.required);
  return granted === 'deprecated' ? { orgId: agent.orgId, deprecatedScope: rule.deprecated! } : { orgId: agent.orgId };
}

/** Agents of an organization a scoped key may not see: private ones without a grant. */
export async function hiddenAgents(store: KernelStore, p: Principal, orgId: string): Promise<string[]> {
  if (p.scopes === null) return [];
  const priv = await store.auth.privateAgents(orgId);
  return priv.filter((id) => !p.agentGrants.includes(id));
}
