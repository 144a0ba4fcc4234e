/**
 * Archived organizations (spec 01 part 7.2, CONTRACT part 7): an organization
 * flagged `archived` can be read, not changed. Every route that acts on an
 * organization (the one in its path, its agent's, or the typed key's own)
 * says in its access declaration what an archived organization is answered
 * (`onArchivedOrg`); without a declaration a mutation (any method but GET,
 * HEAD and OPTIONS) is refused with `423 ORG_ARCHIVED` and a read is served.
 * A route that changes nothing though it is a POST (a capability check), or
 * that records what already happened elsewhere (a vendor's receipt), declares
 * `serve`.
 */
import type { KernelStore } from '../../store/kernel.js';
import { organizationOf } from './auth.js';
import { KernelErrors } from './error-registry.js';

/** `refuse`: 423 ORG_ARCHIVED on an archived organization; `serve`: answered as on any other. */
export type ArchivedOrgRule = 'refuse' | 'serve';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The rule a route follows: its declaration, else refuse for a mutation and serve for a read. */
export const archivedOrgRuleOf = (declared: ArchivedOrgRule | undefined, method: string): ArchivedOrgRule =>
  declared ?? (READ_METHODS.has(method.toUpperCase()) ? 'serve' : 'refuse');

export const orgArchived = (orgId: string) =>
  KernelErrors.ORG_ARCHIVED(`The organization ${orgId} is archived: it can be read, not changed.`, { orgId });

/**
 * Refuses the request when `orgId` is archived (the organization as the kernel looked it up to
 * authorize the request: a change of the flag is seen within CREDENTIAL_CACHE_MS).
 */
export async function refuseIfArchived(store: KernelStore, orgId: string): Promise<void> {
  const org = await organizationOf(store, orgId);
  if (org?.archived === true) throw orgArchived(orgId);
}
