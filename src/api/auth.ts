/**
 * Bearer authentication and scope checks (spec 01 part 5).
 *
 * A credential is an API key (scoped, or legacy with `scopes: null` acting as
 * its owner) or a user session. Scoped keys hold explicit scopes; wildcards
 * (`logs:*`, `*:read`) cover their area except sensitive scopes, which only
 * an exact grant satisfies. Legacy keys and sessions act as the user: an
 * organization `owner` or `admin` holds every scope there, any other member
 * the read scopes (README, Authentication).
 */
import type { FastifyRequest } from 'fastify';
import { hashToken } from '../security/token-hash.js';
import type { Store } from '../store/store.js';
import { insufficientScope, notProjected, unauthorized } from './errors.js';

export const SENSITIVE_SCOPES: ReadonlySet<string> = new Set([
  'secrets:read', 'secrets:write', 'credits:grant', 'credits:deduct', 'billing:manage', 'negotiated-plans:write',
  'telephony:provision', 'members:assign-role', 'api-keys:issue', 'tokens:mint', 'rights:assign',
  'marketplace:review', 'promo-codes:manage', 'logs:manage', 'logs:ingest',
]);

const isSensitive = (scope: string): boolean => SENSITIVE_SCOPES.has(scope) || scope.startsWith('platform:');

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

/** Does a scoped grant list satisfy `required`? */
export function scopesSatisfy(granted: readonly string[], required: string): boolean {
  if (granted.includes(required)) return true;
  if (isSensitive(required)) return false;
  const [area, action] = required.split(':');
  return granted.some((g) => g === `${area}:*` || (action !== undefined && g === `*:${action}`) || g === '*');
}

const READ_SCOPE = /:read$/;
const ADMIN_ROLES = new Set(['owner', 'admin']);

export async function authenticate(req: FastifyRequest, store: Store): Promise<Principal> {
  const header = req.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer ([\x21-\x7e]+)$/.exec(header.trim()) : null;
  if (!match) throw unauthorized('No token provided');
  const token = match[1]!;
  const hash = hashToken(token);
  const key = await store.auth.findKey(hash);
  if (key) {
    if (key.status !== 'active') throw unauthorized('Invalid or expired token');
    return {
      kind: 'api_key', userId: key.ownerId, keyOrgId: key.orgId, scopes: key.scopes, agentGrants: key.agentGrants,
      credentialId: `key_${hash.slice(0, 16)}`,
    };
  }
  const session = await store.auth.findSession(hash);
  if (session) {
    if (session.revoked) throw unauthorized('Invalid or expired token', 'SESSION_REVOKED');
    return {
      kind: 'session', userId: session.userId, keyOrgId: undefined, scopes: null, agentGrants: [],
      credentialId: `ses_${hash.slice(0, 16)}`,
    };
  }
  throw unauthorized('Invalid or expired token');
}

/**
 * Organization-scoped routes: the organization must be visible to the
 * credential (else RESOURCE_NOT_PROJECTED, the same for another org and a
 * nonexistent one), then the scope must be held (else INSUFFICIENT_SCOPE).
 */
export async function authorizeOrg(store: Store, p: Principal, orgId: string, requiredScope: string): Promise<void> {
  const org = await store.auth.org(orgId);
  const role = await store.auth.roleIn(p.userId, orgId);
  const visible = org !== undefined && (p.kind === 'api_key' ? p.keyOrgId === orgId && (p.scopes !== null || role !== undefined) : role !== undefined);
  if (!visible) throw notProjected('organization', orgId, requiredScope);
  const allowed =
    p.scopes !== null
      ? scopesSatisfy(p.scopes, requiredScope)
      : ADMIN_ROLES.has(role ?? '') || READ_SCOPE.test(requiredScope);
  if (!allowed) throw insufficientScope('organization', orgId, requiredScope);
}
