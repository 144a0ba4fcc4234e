/**
 * RCS agents (spec 02 parts 2.3, 3, 4.3; contract telephony T5): sender
 * records an organization registers, updates, links to a platform agent and
 * suspends, and device reachability through the RCS port. The platform never
 * moves an agent's status on its own: PATCH stores the value given. A
 * suspended agent cannot be restored, changed, linked or checked.
 */
import { newId } from '../../../model/ids.js';
import { RESOURCE_ID } from '../../../api/kernel/access.js';
import type { UnitOfWork } from '../../../store/unit-of-work.js';
import { emailOf, type Actor, type TelephonyDeps } from '../context.js';
import { TelephonyErrors, fieldRules, rcsAgentNotFound } from '../errors.js';
import { msisdnOf } from '../numbers/e164.js';
import { bulkList } from './bulk-list.js';
import { isSenderTaken, rcsRepo, type RcsAgentChanges, type RcsAgentRow } from './repository.js';
import { auditActorOf } from '../../../api/kernel/auth.js';

export const RCS_LIST_LIMIT = { default: 50, max: 200 } as const;
export const E164_RULE = 'phoneNumber must be an E.164 phone number (+ and digits)';

export interface RcsAgentView {
  id: string;
  orgId: string;
  senderId: string;
  displayName: string;
  description?: string;
  logoUrl?: string;
  bannerUrl?: string;
  status: string;
  webhookUrl?: string;
  reserved: string[];
  regions: string[];
  createdBy: string;
  createdByEmail?: string;
  linkedAgentId?: string;
  createdAt: number;
}

/** The read form (contract telephony T5 names; `reserved` is always empty). */
export function rcsAgentView(a: RcsAgentRow): RcsAgentView {
  const opt = <K extends string>(key: K, v: string | null) => (v !== null ? { [key]: v } : {}) as Partial<Record<K, string>>;
  return {
    id: a.id, orgId: a.orgId, senderId: a.senderId, displayName: a.displayName,
    ...opt('description', a.description), ...opt('logoUrl', a.logoUrl), ...opt('bannerUrl', a.bannerUrl),
    status: a.status, ...opt('webhookUrl', a.webhookUrl), reserved: [], regions: a.regions,
    createdBy: a.createdBy, ...opt('createdByEmail', a.createdByEmail), ...opt('linkedAgentId', a.linkedAgentId), createdAt: a.createdAt,
  };
}

/** An E.164 number as the RCS bodies take it: `+` and digits, a possible number (libphonenumber-js). */
export const isE164 = (raw: string): boolean => raw.startsWith('+') && msisdnOf(raw) !== undefined;

export interface RegisterInput {
  senderId: string;
  displayName: string;
  description?: string | undefined;
  logoUrl?: string | undefined;
  bannerUrl?: string | undefined;
  regions?: string[] | undefined;
}

export interface BulkAnswer {
  reachableUsers: string[];
  totalRandomSampleUserCount: number;
  reachableRandomSampleUserCount: number;
  estimatedReachabilityPercent: number;
}

/** 100 * part / whole rounded to two decimals (half away from zero); 0 for an empty whole. */
export function percentOf(part: number, whole: number): number {
  if (whole === 0) return 0;
  return Math.round((part * 10_000) / whole) / 100;
}

const audit = (tx: UnitOfWork, actor: Actor, action: string, a: RcsAgentRow, details: Record<string, unknown> = {}) =>
  tx.audit({ orgId: actor.orgId, action: `telephony.rcs_agent.${action}`, actor: auditActorOf(actor.principal), targetType: 'rcs_agent', targetId: a.id, details: { senderId: a.senderId, ...details } });

export function createRcsService(deps: TelephonyDeps) {
  const { store } = deps;
  const { rcs } = deps.vendors;
  const repo = rcsRepo(store.sql);

  /** The organization's agent, or 404; `usable`: a suspended one is not found either. */
  async function find(orgId: string, id: string, usable: boolean): Promise<RcsAgentRow> {
    const a = RESOURCE_ID.test(id) ? await repo.get(orgId, id) : undefined;
    if (!a || (usable && a.status === 'suspended')) throw rcsAgentNotFound();
    return a;
  }

  /** Runs `fn` on the locked agent (404 when unknown; `usable`: also when suspended) and answers it as it is after. */
  async function mutate(actor: Actor, id: string, usable: boolean, fn: (tx: UnitOfWork, a: RcsAgentRow) => Promise<void>): Promise<RcsAgentView> {
    if (!RESOURCE_ID.test(id)) throw rcsAgentNotFound();
    await store.unitOfWork(async (tx) => {
      const a = await rcsRepo(tx.sql).get(actor.orgId, id, true);
      if (!a || (usable && a.status === 'suspended')) throw rcsAgentNotFound();
      await fn(tx, a);
    });
    return rcsAgentView((await repo.get(actor.orgId, id))!);
  }

  return {
    async register(actor: Actor, input: RegisterInput): Promise<RcsAgentView> {
      const row: RcsAgentRow = {
        id: `rcs_${newId()}`, orgId: actor.orgId, senderId: input.senderId, displayName: input.displayName,
        description: input.description ?? null, logoUrl: input.logoUrl ?? null, bannerUrl: input.bannerUrl ?? null,
        status: 'pending', webhookUrl: null, regions: input.regions ?? [], createdBy: actor.principal.userId,
        createdByEmail: (await emailOf(store, actor.principal.userId)) ?? null, linkedAgentId: null, createdAt: Date.now(),
      };
      await store.unitOfWork(async (tx) => {
        try {
          await rcsRepo(tx.sql).insert(row);
        } catch (e) {
          if (isSenderTaken(e)) throw TelephonyErrors.RCS_SENDER_TAKEN(`Sender ID ${input.senderId} is already registered`);
          throw e;
        }
        await audit(tx, actor, 'registered', row);
      });
      return rcsAgentView(row);
    },

    async list(orgId: string, status: string | undefined, limit: number, offset: number): Promise<{ agents: RcsAgentView[]; count: number }> {
      const page = await repo.page(orgId, status, limit, offset);
      return { agents: page.agents.map(rcsAgentView), count: page.total };
    },

    async get(orgId: string, id: string): Promise<RcsAgentView> {
      return rcsAgentView(await find(orgId, id, false));
    },

    /** Stores what is given, `status` included, unchecked (spec 02 part 3); a suspended agent is not found. */
    async update(actor: Actor, id: string, changes: RcsAgentChanges): Promise<RcsAgentView> {
      return mutate(actor, id, true, async (tx, a) => {
        await rcsRepo(tx.sql).update(a.id, changes);
        await audit(tx, actor, 'updated', a, { fields: Object.keys(changes).filter((k) => changes[k as keyof RcsAgentChanges] !== undefined), ...(changes.status !== undefined ? { status: changes.status, previousStatus: a.status } : {}) });
      });
    },

    /** Suspends the agent, whatever its status; the carrier's agent is untouched. */
    async suspend(actor: Actor, id: string): Promise<void> {
      await mutate(actor, id, false, async (tx, a) => {
        await rcsRepo(tx.sql).update(a.id, { status: 'suspended' });
        await audit(tx, actor, 'suspended', a, { previousStatus: a.status });
      });
    },

    /** Records `agentId` (a platform agent of the organization) for the sender; no inbound channel record is made. */
    async link(actor: Actor, id: string, agentId: string): Promise<RcsAgentView> {
      // The RCS agent first (404), then the platform agent's organization (403); both read before the
      // unit of work, whose transaction holds the embedded store's one connection.
      await find(actor.orgId, id, true);
      const agent = RESOURCE_ID.test(agentId) ? await store.auth.agent(agentId) : undefined;
      if (!agent || agent.orgId !== actor.orgId) throw TelephonyErrors.TRUNK_AGENT_NOT_IN_ORG('Agent does not belong to this organization');
      return mutate(actor, id, true, async (tx, a) => {
        await rcsRepo(tx.sql).setLinkedAgent(a.id, agentId);
        await audit(tx, actor, 'linked', a, { agentId, previousAgentId: a.linkedAgentId });
      });
    },

    async unlink(actor: Actor, id: string): Promise<RcsAgentView> {
      return mutate(actor, id, false, async (tx, a) => {
        await rcsRepo(tx.sql).setLinkedAgent(a.id, null);
        await audit(tx, actor, 'unlinked', a, { agentId: a.linkedAgentId });
      });
    },

    async checkCapability(orgId: string, id: string, phoneNumber: string) {
      const a = await find(orgId, id, true);
      if (a.status !== 'testing' && a.status !== 'live') throw TelephonyErrors.RCS_AGENT_NOT_TESTING_OR_LIVE('RCS agent must be testing or live');
      if (!isE164(phoneNumber)) throw fieldRules('phoneNumber', [E164_RULE]);
      return rcs.checkCapability(a.senderId, phoneNumber);
    },

    /** The agent must be live, checked before the list is (spec 02 part 4.3). */
    async bulkCapability(orgId: string, id: string, body: unknown): Promise<BulkAnswer> {
      const a = await find(orgId, id, true);
      if (a.status !== 'live') throw TelephonyErrors.RCS_AGENT_NOT_LIVE('RCS agent must be live');
      const numbers = await bulkList(body);
      const found = await rcs.bulkCapability(a.senderId, numbers);
      return { ...found, estimatedReachabilityPercent: percentOf(found.reachableRandomSampleUserCount, found.totalRandomSampleUserCount) };
    },
  };
}

export type RcsService = ReturnType<typeof createRcsService>;
