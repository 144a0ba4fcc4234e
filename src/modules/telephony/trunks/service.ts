/**
 * SIP trunks (spec 02 parts 2.1, 3, 4.1): the rules of each route, in the
 * spec's order of checks. Mutations run in one unit of work with their audit
 * entry, the trunk row locked, so concurrent requests cannot pass a limit.
 */
import { randomBytes } from 'node:crypto';
import { newId } from '../../../model/ids.js';
import { auditActorOf, authorizeAgent } from '../../../api/kernel/auth.js';
import { RESOURCE_ID } from '../../../api/kernel/access.js';
import type { UnitOfWork } from '../../../store/unit-of-work.js';
import { canonicalCidr } from '../../../vendors/carrier/cidr.js';
import { SCOPES, emailOf, type Actor, type TelephonyDeps } from '../context.js';
import { TelephonyErrors, atCarrier, trunkNotFound } from '../errors.js';
import { digestSecret, generatePassword } from './digest.js';
import { trunksRepo, type AclEntry, type Mode, type Region, type TrunkRow, type TrunkWithParts } from './repository.js';

export const MAX_ACL_ENTRIES = 16;
export const MAX_DIGEST_USERS = 200;

export interface TrunkView {
  id: string;
  domain: string;
  sipEndpoint: string;
  region: Region;
  status: string;
  tls: Mode;
  srtp: Mode;
  digestAuthEnabled: boolean;
  digestUsers: string[];
  acl: { ip: string; description?: string; createdAt: number }[];
  defaultAgentId?: string;
  createdAt: number;
  createdBy: string;
  createdByEmail?: string;
  connectionDetails: { sipUri: string; region: Region; transport: string[]; port: number };
}

/** The read form of spec 02 part 2.1. */
export function trunkView(t: TrunkWithParts): TrunkView {
  const host = `${t.domain}.sip-${t.region}.${t.host}`;
  const tlsOnly = t.tls === 'always';
  return {
    id: t.id,
    domain: t.domain,
    sipEndpoint: `sip:*@${host}`,
    region: t.region,
    status: t.status,
    tls: t.tls,
    srtp: t.srtp,
    digestAuthEnabled: t.digestAuthEnabled,
    digestUsers: t.digestUsers,
    acl: t.acl.map((a) => ({ ip: a.ip, ...(a.description !== null ? { description: a.description } : {}), createdAt: a.createdAt })),
    ...(t.defaultAgentId !== null ? { defaultAgentId: t.defaultAgentId } : {}),
    createdAt: t.createdAt,
    createdBy: t.createdBy,
    ...(t.createdByEmail !== null ? { createdByEmail: t.createdByEmail } : {}),
    connectionDetails: {
      sipUri: `sip:{agent-id}@${host}`,
      region: t.region,
      transport: tlsOnly ? ['TLS'] : ['UDP', 'TCP', 'TLS'],
      port: tlsOnly ? 5061 : 5060,
    },
  };
}

export interface CreateTrunkInput {
  region?: Region;
  acl?: string[];
  enableDigestAuth?: boolean;
  tls?: Mode;
  srtp?: Mode;
}

const audit = (tx: UnitOfWork, actor: Actor, action: string, trunkId: string, details: Record<string, unknown> = {}) =>
  tx.audit({ orgId: actor.orgId, action: `telephony.trunk.${action}`, actor: auditActorOf(actor.principal), targetType: 'sip_trunk', targetId: trunkId, details });

/**
 * The read-cache topic of an organization's trunks with their ACL entries and digest users: every
 * unit of work below that writes them says so (`tx.changed`), and only they write them.
 */
export const TRUNKS_TOPIC = 'telephony.trunks';

export function createTrunkService(deps: TelephonyDeps) {
  const { store } = deps;
  const { carrier } = deps.vendors;
  const repo = trunksRepo(store.sql);
  // The list's read forms by organization (the answer is built from them unchanged).
  const lists = deps.reads.cache<TrunkView[]>(TRUNKS_TOPIC);

  async function view(orgId: string, id: string): Promise<TrunkView> {
    const t = await repo.get(orgId, id);
    if (!t) throw trunkNotFound();
    return trunkView((await repo.withParts([t]))[0]!);
  }

  /** Runs `fn` on the locked trunk (404 when unknown or deleted), then answers the trunk as it is now. */
  async function mutate(actor: Actor, trunkId: string, fn: (tx: UnitOfWork, t: TrunkRow, r: ReturnType<typeof trunksRepo>) => Promise<void>): Promise<void> {
    if (!RESOURCE_ID.test(trunkId)) throw trunkNotFound();
    await store.unitOfWork(async (tx) => {
      const r = trunksRepo(tx.sql);
      const t = await r.get(actor.orgId, trunkId, true);
      if (!t) throw trunkNotFound();
      await fn(tx, t, r);
      tx.changed(TRUNKS_TOPIC);
    });
  }

  return {
    view,

    async list(orgId: string): Promise<TrunkView[]> {
      return lists.get(orgId, async () => (await repo.listWithParts(orgId)).map(trunkView));
    },

    async get(orgId: string, trunkId: string): Promise<TrunkView> {
      if (!RESOURCE_ID.test(trunkId)) throw trunkNotFound();
      return view(orgId, trunkId);
    },

    /**
     * A trunk needs an ACL entry or digest authentication: without either it is kept as `failed`
     * (the caller deletes it) and the request answers 400. Malformed entries are the carrier's to
     * refuse (422), and then nothing is kept.
     */
    async create(actor: Actor, input: CreateTrunkInput): Promise<TrunkView> {
      const acl = input.acl ?? [];
      const digest = input.enableDigestAuth ?? false;
      if (acl.length > MAX_ACL_ENTRIES) throw TelephonyErrors.TRUNK_ACL_FULL(`Maximum ${MAX_ACL_ENTRIES} ACL entries allowed`);
      const now = Date.now();
      const trunk: TrunkRow = {
        id: `trk_${newId()}`, orgId: actor.orgId, domain: `trk-${randomBytes(8).toString('hex')}`, host: carrier.sipHost,
        region: input.region ?? 'us', status: 'active', tls: input.tls ?? 'optional', srtp: input.srtp ?? 'optional',
        digestAuthEnabled: digest, defaultAgentId: null, createdAt: now, createdBy: actor.principal.userId,
        createdByEmail: (await emailOf(store, actor.principal.userId)) ?? null,
      };
      if (acl.length === 0 && !digest) {
        await store.unitOfWork(async (tx) => {
          await trunksRepo(tx.sql).insert({ ...trunk, status: 'failed' }, []);
          tx.changed(TRUNKS_TOPIC);
          await audit(tx, actor, 'failed', trunk.id, { reason: 'no ACL entry and digest authentication not enabled' });
        });
        throw TelephonyErrors.TRUNK_AUTH_REQUIRED('At least one ACL entry or digest authentication is required for security');
      }
      const provisioned = await atCarrier(() => carrier.createTrunk(trunk.domain, trunk.region, acl));
      const entries: AclEntry[] = provisioned.acl.map((ip) => ({ ip, description: null, createdAt: now }));
      try {
        await store.unitOfWork(async (tx) => {
          await trunksRepo(tx.sql).insert(trunk, entries);
          tx.changed(TRUNKS_TOPIC);
          await audit(tx, actor, 'created', trunk.id, { region: trunk.region, acl: provisioned.acl, digestAuthEnabled: digest, tls: trunk.tls, srtp: trunk.srtp });
        });
      } catch (e) {
        // Not recorded here: the carrier's trunk goes too.
        await carrier.deleteTrunk(trunk.domain).catch(() => {});
        throw e;
      }
      return view(actor.orgId, trunk.id);
    },

    async remove(actor: Actor, trunkId: string): Promise<void> {
      await mutate(actor, trunkId, async (tx, t, r) => {
        if (t.status !== 'failed') await atCarrier(() => carrier.deleteTrunk(t.domain));
        await r.markDeleted(t.id);
        await audit(tx, actor, 'deleted', t.id, { previousStatus: t.status });
      });
    },

    async addAcl(actor: Actor, trunkId: string, ip: string, description: string | undefined): Promise<TrunkView> {
      await mutate(actor, trunkId, async (tx, t, r) => {
        const current = await r.acl(t.id);
        if (current.length >= MAX_ACL_ENTRIES) throw TelephonyErrors.TRUNK_ACL_FULL(`Maximum ${MAX_ACL_ENTRIES} ACL entries allowed`);
        // The carrier checks the entry (a malformed one is its refusal) and answers it canonical; an
        // entry it has already is no change there.
        const cidr = await atCarrier(() => carrier.addAclEntry(t.domain, ip));
        if (current.some((a) => a.ip === cidr)) throw TelephonyErrors.TRUNK_ACL_DUPLICATE('IP already in ACL');
        await r.addAcl(t.id, { ip: cidr, description: description ?? null, createdAt: Date.now() });
        await audit(tx, actor, 'acl_added', t.id, { ip: cidr });
      });
      return view(actor.orgId, trunkId);
    },

    async removeAcl(actor: Actor, trunkId: string, ip: string): Promise<TrunkView> {
      await mutate(actor, trunkId, async (tx, t, r) => {
        const current = await r.acl(t.id);
        const wanted = canonicalCidr(ip) ?? ip;
        const entry = current.find((a) => a.ip === ip || a.ip === wanted);
        if (!entry) throw TelephonyErrors.TRUNK_ACL_ENTRY_NOT_FOUND('IP not found in ACL');
        // Even with digest authentication on: a replacement comes first.
        if (current.length === 1) throw TelephonyErrors.TRUNK_ACL_LAST_ENTRY('Cannot remove last ACL entry. Add a replacement first.');
        await atCarrier(() => carrier.removeAclEntry(t.domain, entry.ip));
        await r.removeAcl(t.id, entry.ip);
        await audit(tx, actor, 'acl_removed', t.id, { ip: entry.ip });
      });
      return view(actor.orgId, trunkId);
    },

    /** A digest user with a fresh password, which this answer alone carries. */
    async createUser(actor: Actor, trunkId: string, username: string): Promise<{ username: string; password: string }> {
      const password = generatePassword();
      await mutate(actor, trunkId, async (tx, t, r) => {
        if (!t.digestAuthEnabled) throw TelephonyErrors.TRUNK_DIGEST_DISABLED('Digest authentication is not enabled on this trunk');
        const users = await r.usernames(t.id);
        if (users.includes(username)) throw TelephonyErrors.TRUNK_USERNAME_TAKEN('Username already exists');
        if (users.length >= MAX_DIGEST_USERS) throw TelephonyErrors.TRUNK_DIGEST_USERS_FULL(`Maximum ${MAX_DIGEST_USERS} digest users allowed`);
        await r.insertUser(t.id, username, digestSecret(store.secretBox, username, realmOf(t), password), Date.now());
        await audit(tx, actor, 'credential_created', t.id, { username });
      });
      return { username, password };
    },

    async listUsers(orgId: string, trunkId: string): Promise<string[]> {
      if (!RESOURCE_ID.test(trunkId)) throw trunkNotFound();
      const t = await repo.get(orgId, trunkId);
      if (!t) throw trunkNotFound();
      return repo.usernames(t.id);
    },

    async deleteUser(actor: Actor, trunkId: string, username: string): Promise<void> {
      await mutate(actor, trunkId, async (tx, t, r) => {
        if (!(await r.deleteUser(t.id, username))) throw TelephonyErrors.TRUNK_DIGEST_USER_NOT_FOUND('User not found');
        await audit(tx, actor, 'credential_deleted', t.id, { username });
      });
    },

    /** A new password for the user, returned this once; the old one stops working. */
    async rotateUser(actor: Actor, trunkId: string, username: string): Promise<{ username: string; password: string }> {
      const password = generatePassword();
      await mutate(actor, trunkId, async (tx, t, r) => {
        if (!(await r.replaceSecret(t.id, username, digestSecret(store.secretBox, username, realmOf(t), password)))) {
          throw TelephonyErrors.TRUNK_DIGEST_USER_NOT_FOUND('User not found');
        }
        await audit(tx, actor, 'credential_rotated', t.id, { username });
      });
      return { username, password };
    },

    /**
     * Links `agentId` as the trunk's answering agent. Order (contract telephony T2): the kernel
     * checked `telephony:read` on the organization; then the agent must belong to it (403 even for
     * an unknown trunk), then `telephony:write` on the agent, then the trunk lookup.
     */
    async linkAgent(actor: Actor, trunkId: string, agentId: string): Promise<TrunkView> {
      const agent = RESOURCE_ID.test(agentId) ? await store.auth.agent(agentId) : undefined;
      if (!agent || agent.orgId !== actor.orgId) throw TelephonyErrors.TRUNK_AGENT_NOT_IN_ORG('Agent does not belong to this organization');
      await authorizeAgent(store, actor.principal, agentId, { required: SCOPES.write });
      await mutate(actor, trunkId, async (tx, t, r) => {
        await r.setAgent(t.id, agentId);
        await audit(tx, actor, 'agent_linked', t.id, { agentId, previousAgentId: t.defaultAgentId });
      });
      return view(actor.orgId, trunkId);
    },

    async unlinkAgent(actor: Actor, trunkId: string): Promise<TrunkView> {
      await mutate(actor, trunkId, async (tx, t, r) => {
        if (t.defaultAgentId === null) throw TelephonyErrors.TRUNK_NO_AGENT_LINKED('No agent is currently linked to this trunk');
        await r.setAgent(t.id, null);
        await audit(tx, actor, 'agent_unlinked', t.id, { agentId: t.defaultAgentId });
      });
      return view(actor.orgId, trunkId);
    },
  };
}

/** The digest realm of a trunk's users: its SIP host. */
const realmOf = (t: TrunkRow): string => `${t.domain}.sip-${t.region}.${t.host}`;

export type TrunkService = ReturnType<typeof createTrunkService>;
