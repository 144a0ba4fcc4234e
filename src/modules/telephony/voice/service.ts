/**
 * Voices of an agent and their versions (spec 02 parts 2.4, 3, 4.4; contract
 * telephony T6). A pushed version runs only once published; publish also
 * re-enables a deactivated voice; DELETE deactivates (nothing is removed, the
 * name becomes reusable). provision-from-config runs its steps (create or
 * reuse, push, publish, bind) each committed, and undoes what it did when a
 * later step fails: a voice it created is deactivated again, a voice it
 * reused gets its previous published version back.
 */
import { newId } from '../../../model/ids.js';
import { RESOURCE_ID } from '../../../api/kernel/access.js';
import type { UnitOfWork } from '../../../store/unit-of-work.js';
import type { AuditEntry } from '../../../store/audit-repo.js';
import { rowBatches } from '../../../store/row-batches.js';
import type { AgentActor, TelephonyDeps } from '../context.js';
import { TelephonyErrors, fieldRules, voiceNotFound } from '../errors.js';
import { CONFIG_FIELDS, type ProvisionBody, type VersionBody } from './schemas.js';
import { configRules, isVersion, nextPatch, pairingRules, type VersionConfig } from './rules.js';
import { isNameTaken, isVersionTaken, voiceRepo, type VersionRow, type VoiceChanges, type VoiceRow } from './repository.js';
import { auditActorOf } from '../../../api/kernel/auth.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** The voice record (create, PUT): no versions. */
export function voiceRecord(v: VoiceRow) {
  return {
    id: v.id, name: v.name, ...(v.description !== null ? { description: v.description } : {}), agentId: v.agentId, active: v.active, source: v.source,
    activeVersionId: v.activeVersion, createdBy: v.createdBy, createdAt: iso(v.createdAt), updatedAt: iso(v.updatedAt),
  };
}

const configOf = (v: VersionRow) => ({ ...v.config, ...(v.bundle !== null ? { bundle: v.bundle } : {}) });

/** The version record a push answers. */
export function versionRecord(v: VersionRow) {
  return {
    id: v.id, version: v.version, ...(v.description !== null ? { description: v.description } : {}), createdBy: v.createdBy,
    createdAt: iso(v.createdAt), updatedAt: iso(v.updatedAt), ...configOf(v),
  };
}

const nameTaken = (name: string) => TelephonyErrors.VOICE_NAME_TAKEN(`A voice agent named "${name}" already exists for this agent`);
const versionNotFound = (version: string, voiceId: string) => TelephonyErrors.VOICE_VERSION_NOT_FOUND(`Version ${version} not found for voice agent ${voiceId}`);

/** Runs `write`, answering the agent's name index's refusal as the duplicate-name error. */
async function naming<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (isNameTaken(e)) throw nameTaken(name);
    throw e;
  }
}

/** The configuration fields of a body as stored (every field sent, `bundle` apart). */
function configFieldsOf(body: Record<string, unknown>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const f of CONFIG_FIELDS) if (body[f] !== undefined) config[f] = body[f];
  return config;
}

/** The voice list's answer: each voice with its versions, newest first. */
function listForm(voices: { voice: VoiceRow; versions: VersionRow[] }[]) {
  return voices.map(({ voice: v, versions }) => ({
    ...voiceRecord(v),
    versions: versions.map((x) => ({
      id: x.id, version: x.version, ...(x.description !== null ? { description: x.description } : {}), active: x.version === v.activeVersion,
      createdAt: iso(x.createdAt), createdBy: x.createdBy, ...configOf(x),
    })),
  }));
}

/** The audit entry of `action` on the agent's voice. */
const auditEntry = (actor: AgentActor, action: string, voiceId: string, details: Record<string, unknown> = {}): AuditEntry => ({
  id: newId(), orgId: actor.orgId, action: `telephony.voice.${action}`, actor: auditActorOf(actor.principal), targetType: 'voice', targetId: voiceId,
  details: { agentId: actor.agentId, ...details }, at: new Date(),
});

const audit = (tx: UnitOfWork, actor: AgentActor, action: string, voiceId: string, details: Record<string, unknown> = {}) =>
  tx.audit(auditEntry(actor, action, voiceId, details));

/**
 * The read-cache topic of an agent's voices with their versions: every write of them below says so
 * (`tx.changed` in a unit of work, `store.changed` after a push's statement), and only they write them.
 */
export const VOICES_TOPIC = 'telephony.voices';

export function createVoiceService(deps: TelephonyDeps) {
  const { store } = deps;
  const repo = voiceRepo(store.sql);
  // The list's answer by agent, serialized (served unchanged).
  const lists = deps.reads.cache<Buffer>(VOICES_TOPIC);

  async function find(agentId: string, voiceId: string): Promise<VoiceRow> {
    const v = RESOURCE_ID.test(voiceId) ? await repo.get(agentId, voiceId) : undefined;
    if (!v) throw voiceNotFound();
    return v;
  }

  /** Runs `fn` on the agent's locked voice (404 when unknown) in one unit of work. */
  async function write(actor: AgentActor, voiceId: string, fn: (tx: UnitOfWork, v: VoiceRow, r: ReturnType<typeof voiceRepo>) => Promise<void>): Promise<void> {
    if (!RESOURCE_ID.test(voiceId)) throw voiceNotFound();
    await store.unitOfWork(async (tx) => {
      const r = voiceRepo(tx.sql);
      const v = await r.get(actor.agentId, voiceId, true);
      if (!v) throw voiceNotFound();
      await fn(tx, v, r);
      tx.changed(VOICES_TOPIC);
    });
  }

  /** `write`, answering the voice as it is after. */
  async function mutate(actor: AgentActor, voiceId: string, fn: (tx: UnitOfWork, v: VoiceRow, r: ReturnType<typeof voiceRepo>) => Promise<void>): Promise<VoiceRow> {
    await write(actor, voiceId, fn);
    return (await repo.get(actor.agentId, voiceId))!;
  }

  async function create(actor: AgentActor, name: string, description: string | undefined): Promise<VoiceRow> {
    const now = Date.now();
    const row: VoiceRow = {
      id: `voice_${newId()}`, agentId: actor.agentId, orgId: actor.orgId, name, description: description ?? null, active: true, source: 'cli',
      activeVersion: null, createdBy: actor.principal.userId, createdAt: now, updatedAt: now,
    };
    await naming(name, () => store.unitOfWork(async (tx) => {
      await voiceRepo(tx.sql).insert(row);
      await audit(tx, actor, 'created', row.id, { name });
      tx.changed(VOICES_TOPIC);
    }));
    return row;
  }

  /**
   * A pushed version and its audit entry, in one statement with the other versions pushed to the
   * voice while its last statement ran (store/row-batches.ts; repository.ts insertVersionsAudited):
   * the voice's row is locked for that statement's one round trip. False: the agent has no such voice.
   */
  const insertVersion = rowBatches<{ agentId: string; voiceId: string; version: VersionRow; audit: AuditEntry }, boolean>(async (_, pushes) => {
    const inserted = await repo.insertVersionsAudited(pushes[0]!.agentId, pushes[0]!.voiceId, pushes);
    if (inserted) store.changed(VOICES_TOPIC);
    return pushes.map(() => inserted);
  }, { weigh: (p) => (p.version.bundle?.length ?? 0) + 4096 });

  async function push(actor: AgentActor, voiceId: string, version: string, description: string | undefined, body: Record<string, unknown>): Promise<VersionRow> {
    const now = Date.now();
    const row: VersionRow = {
      id: `vver_${newId()}`, voiceId, version, description: description ?? null, config: configFieldsOf(body),
      bundle: typeof body.bundle === 'string' ? body.bundle : null, createdBy: actor.principal.userId, createdAt: now, updatedAt: now,
    };
    if (!RESOURCE_ID.test(voiceId)) throw voiceNotFound();
    let inserted: boolean;
    try {
      inserted = await insertVersion(`${actor.agentId}\u0000${voiceId}`, { agentId: actor.agentId, voiceId, version: row, audit: auditEntry(actor, 'version_pushed', voiceId, { version }) });
    } catch (e) {
      if (isVersionTaken(e)) throw TelephonyErrors.VOICE_VERSION_EXISTS(`Version ${version} already exists for voice agent ${voiceId}`);
      throw e;
    }
    if (!inserted) throw voiceNotFound();
    return row;
  }

  /** Makes `version` the running one and the voice active; answers when it was published. */
  async function publish(actor: AgentActor, voiceId: string, version: string): Promise<number> {
    const at = Date.now();
    await mutate(actor, voiceId, async (tx, v, r) => {
      if (!(await r.version(voiceId, version))) throw versionNotFound(version, voiceId);
      await naming(v.name, () => r.update(voiceId, { activeVersion: version, active: true }, at));
      await audit(tx, actor, 'published', voiceId, { version, previousVersion: v.activeVersion, reactivated: !v.active });
    });
    return at;
  }

  return {
    /**
     * GET the voice list: the agent's voices with their versions, as the route answers them: `encode`
     * makes the answer's bytes (the route's serializer), once per read of the store; they answer
     * every request until a write of the voices (VOICES_TOPIC) or their age bound. With every
     * version's bundle, serializing the list cost more than reading it.
     */
    async listAnswer(agentId: string, encode: (voices: ReturnType<typeof listForm>) => Buffer): Promise<Buffer> {
      return lists.get(agentId, async () => encode(listForm(await repo.listWithVersions(agentId))));
    },

    async create(actor: AgentActor, name: string, description: string | undefined) {
      return voiceRecord(await create(actor, name, description));
    },

    /** Pushes a version; every field rule is checked, each failed one named (400 field validation). */
    async pushVersion(actor: AgentActor, voiceId: string, body: VersionBody) {
      // An unknown voice is answered before the body's rules: looked up here only when a rule
      // failed, and otherwise by the push's own locked read (the same 404).
      const versionValid = isVersion(body.version);
      const rules = versionValid ? configRules(body as VersionConfig) : [];
      if (!versionValid || rules.length > 0) {
        await find(actor.agentId, voiceId);
        if (!versionValid) throw fieldRules('version', [`Invalid semantic version: ${body.version}`]);
        throw fieldRules(rules[0]!.split(' ')[0]!, rules);
      }
      return versionRecord(await push(actor, voiceId, body.version, body.description, body as unknown as Record<string, unknown>));
    },

    async versions(agentId: string, voiceId: string) {
      const v = await find(agentId, voiceId);
      const versions = await repo.versions([v.id], false);
      return {
        versions: versions.map((x) => ({
          version: x.version, createdDate: iso(x.createdAt), createdBy: x.createdBy, isCurrent: x.version === v.activeVersion,
          createdByEmail: null, createdByFullName: null,
        })),
        activeVersionId: v.activeVersion,
      };
    },

    async publish(actor: AgentActor, voiceId: string, version: string) {
      const at = await publish(actor, voiceId, version);
      return { message: `Version ${version} published for voice agent ${voiceId}`, voiceId, activeVersionId: version, publishedAt: iso(at) };
    },

    async update(actor: AgentActor, voiceId: string, changes: { name?: string | undefined; description?: string | undefined; active?: boolean | undefined }) {
      const v = await mutate(actor, voiceId, async (tx, current, r) => {
        const name = changes.name ?? current.name;
        await naming(name, () => r.update(voiceId, changes as VoiceChanges, Date.now()));
        await audit(tx, actor, 'updated', voiceId, { fields: Object.keys(changes).filter((k) => changes[k as keyof typeof changes] !== undefined), ...(changes.active !== undefined ? { active: changes.active } : {}) });
      });
      return voiceRecord(v);
    },

    async deactivate(actor: AgentActor, voiceId: string) {
      await mutate(actor, voiceId, async (tx, v, r) => {
        await r.update(voiceId, { active: false }, Date.now());
        await audit(tx, actor, 'deactivated', voiceId, { wasActive: v.active });
      });
      return { message: `Voice agent ${voiceId} deactivated`, deleted: false as const, deactivated: true as const };
    },

    /**
     * Creates or reuses the active voice named `name`, pushes the next patch version, publishes it and
     * binds it to `msisdn` (an active number of the agent's organization). A failed step after the first
     * undoes the first: a created voice is deactivated, a reused one gets its previous published version.
     */
    async provision(actor: AgentActor, body: ProvisionBody) {
      const rules = [...configRules(body as VersionConfig), ...pairingRules(body as VersionConfig)];
      if (rules.length > 0) throw TelephonyErrors.VOICE_CONFIG_INVALID(`Invalid voice config: ${rules.join('; ')}`);
      const msisdn = body.msisdn?.replace(/^\+/, '');
      const name = body.name ?? (msisdn !== undefined ? `phone-${msisdn}`.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 64) : 'phone-voice');
      let voice = await repo.activeNamed(actor.agentId, name);
      const reused = voice !== undefined;
      const previous = voice?.activeVersion ?? null;
      voice ??= await create(actor, name, body.description);
      const voiceId = voice.id;
      try {
        const version = nextPatch((await repo.versions([voiceId], false)).map((x) => x.version));
        await push(actor, voiceId, version, body.description, body as unknown as Record<string, unknown>);
        await publish(actor, voiceId, version);
        if (msisdn !== undefined) {
          await store.unitOfWork(async (tx) => {
            if (!(await voiceRepo(tx.sql).bindNumber(actor.orgId, msisdn, voiceId))) throw TelephonyErrors.NUMBER_NOT_FOUND('Phone number not found or not active');
            await audit(tx, actor, 'bound', voiceId, { msisdn, version });
          });
        }
        return { voiceId, version };
      } catch (e) {
        await store.unitOfWork(async (tx) => {
          const changes: VoiceChanges = reused ? { activeVersion: previous } : { active: false };
          await voiceRepo(tx.sql).update(voiceId, changes, Date.now());
          await audit(tx, actor, 'provision_rolled_back', voiceId, reused ? { restoredVersion: previous } : { deactivated: true });
          tx.changed(VOICES_TOPIC);
        });
        throw e;
      }
    },
  };
}

export type VoiceService = ReturnType<typeof createVoiceService>;
