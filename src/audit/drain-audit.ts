/**
 * Audit entries for drain mutations (spec 01 part 6): what is recorded and
 * what never is. Endpoint as scheme://host/path only; header names only; the
 * number of scrub rules only; whether signing is on, never the secret.
 */
import { newId } from '../model/ids.js';
import type { Drain } from '../model/drain.js';
import { destinationOf } from '../destinations/index.js';
import type { Store } from '../store/store.js';
import type { NewAuditEntry, UnitOfWork } from '../store/unit-of-work.js';

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
    signing: destinationOf(d.type).signs && d.secret !== null,
    selectors: d.selectors,
  };
}

/** The target type of every drain audit entry: what the drain audit route reads. */
export const DRAIN_TARGET = 'log_drain';

/** The audit entry recording `action` on `drain` (id and time are filled in when it is written). */
export function drainAuditEntry(actor: Actor, action: string, drain: Drain, extra: Record<string, unknown> = {}): NewAuditEntry {
  return {
    orgId: drain.orgId, action, actor, targetType: DRAIN_TARGET, targetId: drain.id,
    details: { ...auditSnapshot(drain), ...extra },
  };
}

/** Records `action` on its own, outside any transaction: for entries that go with no write of their own. */
export async function recordAudit(
  store: Store,
  actor: Actor,
  action: string,
  drain: Drain,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await store.audit.insert({ ...drainAuditEntry(actor, action, drain, extra), id: newId(), at: new Date() });
}

/** Records `action` in the unit of work `tx`: the entry commits or rolls back with the mutation it records. */
export async function auditDrain(
  tx: Pick<UnitOfWork, 'audit'>,
  actor: Actor,
  action: string,
  drain: Drain,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await tx.audit(drainAuditEntry(actor, action, drain, extra));
}
