/**
 * Audit entries for drain mutations (spec 01 part 6): what is recorded and
 * what never is. Endpoint as scheme://host/path only; header names only; the
 * number of scrub rules only; whether signing is on, never the secret.
 */
import { ulid } from 'ulid';
import type { Drain } from '../model/drain.js';
import type { Store } from '../store/store.js';

export interface Actor {
  type: 'user' | 'api_key' | 'system';
  id: string;
}

export function auditableEndpoint(endpoint: string | null): string | undefined {
  if (!endpoint) return undefined;
  try {
    const u = new URL(endpoint);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

export function auditSnapshot(d: Drain): Record<string, unknown> {
  return {
    name: d.name,
    type: d.type,
    site: d.site ?? undefined,
    format: d.format,
    state: d.state,
    version: d.version,
    endpoint: auditableEndpoint(d.endpoint),
    headerNames: d.headers.map((h) => h.name),
    scrubRuleCount: d.scrubRules?.length ?? 0,
    signing: d.type === 'http' && d.secret !== null,
    selectors: d.selectors,
  };
}

export async function recordAudit(
  store: Store,
  actor: Actor,
  action: string,
  drain: Drain,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await store.audit.insert({
    id: ulid(), orgId: drain.orgId, action, actor, targetType: 'log_drain', targetId: drain.id,
    details: { ...auditSnapshot(drain), ...extra }, at: new Date(),
  });
}
