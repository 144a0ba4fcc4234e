/**
 * The scope catalogue. Each family declares the scopes its routes need
 * (defineScopes), which of them are sensitive (granted by exact name only:
 * no `area:*`, `*:action` or `*` covers them) and which are deprecated; the
 * platform-wide sensitive scopes of spec 01 part 5 are declared here. A route
 * naming a scope nobody declared cannot be registered (kernel/access.ts).
 */

export interface ScopeDefinition {
  sensitive?: boolean;
  /** Accepted on some routes until a sunset (spec 01 part 5.6). */
  deprecated?: boolean;
  description: string;
}

export interface CataloguedScope extends ScopeDefinition {
  name: string;
  family: string;
}

const catalogue = new Map<string, CataloguedScope>();
/** Prefixes whose every scope is sensitive (`platform:*`). */
const sensitivePrefixes = new Set<string>();

export function defineScopes(family: string, defs: Record<string, ScopeDefinition>): void {
  for (const [name, def] of Object.entries(defs)) {
    const known = catalogue.get(name);
    if (known && known.family !== family) throw new Error(`scope ${name} is declared by ${known.family} already`);
    if (name.endsWith(':*')) {
      if (!def.sensitive) throw new Error(`a wildcard scope ${name} may be declared only as a sensitive area`);
      sensitivePrefixes.add(name.slice(0, -1));
    }
    catalogue.set(name, { name, family, ...def });
  }
}

export function isSensitiveScope(scope: string): boolean {
  if (catalogue.get(scope)?.sensitive) return true;
  for (const prefix of sensitivePrefixes) if (scope.startsWith(prefix)) return true;
  return false;
}

/** Whether a route may name `scope`: declared by a family, or inside a declared sensitive area. */
export function isCatalogued(scope: string): boolean {
  if (catalogue.has(scope)) return true;
  for (const prefix of sensitivePrefixes) if (scope.startsWith(prefix)) return true;
  return false;
}


/** Spec 01 part 5.3: sensitive whatever family owns them. */
defineScopes('platform', {
  'secrets:read': { sensitive: true, description: 'read stored secrets' },
  'secrets:write': { sensitive: true, description: 'write stored secrets' },
  'credits:grant': { sensitive: true, description: 'grant credits' },
  'credits:deduct': { sensitive: true, description: 'deduct credits' },
  'billing:manage': { sensitive: true, description: 'manage billing' },
  'negotiated-plans:write': { sensitive: true, description: 'write negotiated plans' },
  'telephony:provision': { sensitive: true, description: 'provision telephony (dispatch calls, buy numbers)' },
  'members:assign-role': { sensitive: true, description: 'assign member roles' },
  'api-keys:issue': { sensitive: true, description: 'issue API keys' },
  'tokens:mint': { sensitive: true, description: 'mint tokens' },
  'rights:assign': { sensitive: true, description: 'assign rights' },
  'marketplace:review': { sensitive: true, description: 'review marketplace submissions' },
  'promo-codes:manage': { sensitive: true, description: 'manage promo codes' },
  'platform:*': { sensitive: true, description: 'platform operations, every one sensitive' },
  'org:manage': { description: 'manage the organization (members hold every other non-sensitive scope)' },
});

/**
 * Scopes several families share (contract skills, "shared scopes"): marketplace skills and
 * templates write with `automations:write` and read installations with `automations:read`, which
 * the skill log route also accepts as its deprecated alternative (spec 01 part 5.6: deprecation is
 * per route, in the route's ScopeRule); template catalogue reads name `marketplace:read`. Declared
 * once here so no family owns them. None is sensitive: `automations:*` and `*:read` cover them.
 */
defineScopes('platform', {
  'automations:read': { description: "read an agent's or organization's skill installations; a skill's logs (deprecated there for logs:read, until the sunset)" },
  'automations:write': { description: 'list, publish and edit marketplace skills of the organization; install, update and uninstall them on an agent' },
  'marketplace:read': { description: 'read the marketplace catalogue' },
});
