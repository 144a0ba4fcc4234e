/**
 * The persona family's service: versions, drafts, presets and enhance, on
 * the persona tables and the model-provider port. No fastify here: routes.ts
 * maps requests to these calls. Every mutation and its audit entry commit in
 * one unit of work, or in one statement (a new current version); model calls
 * (which can take minutes) and website fetches happen before it, so a failed
 * or refused call stores nothing.
 */
import type { KernelStore } from '../../store/kernel.js';
import { newId } from '../../model/ids.js';
import { rowBatches } from '../../store/row-batches.js';
import { RESOURCE_ID } from '../../api/kernel/access.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import type { ModelProvider } from '../../vendors/model-provider/port.js';
import { personaText, type InstructionExample, type Persona, type PersonaConfig } from '../../vendors/model-provider/port.js';
import type { GuardedFetcher } from '../../security/guarded-fetch.js';
import { readWebsite } from './website.js';
import { createPersonaRepo, isDraftConflict, type NewCurrentVersion, type PersonaVersion, type Preset, type VersionStatus } from './repository.js';
import { draftVersionNotFound, noDraft, PersonaErrors, presetNotFound, providerFailure, versionNotFound } from './errors.js';
import { CONFIG_FIELDS, type DraftBody, type GenerateBody } from './schemas.js';
import { BUILT_IN_PRESETS, catalog } from './presets.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';
import { PERSONA_TOPIC } from './topic.js';

export interface PersonaServiceDeps {
  store: KernelStore;
  /** The kernel's read caches (api/kernel/read-cache.ts): the versions list. */
  reads: ReadCaches;
  provider: ModelProvider;
  /** Fetches a business website for `enhance/website` when the provider reads websites. */
  fetcher: GuardedFetcher;
}

/** Who acts, on which organization's agent. */
export interface Actor {
  userId: string;
  orgId: string;
}

export interface DraftAnswer {
  status: 'draft' | 'draft_exists';
  draft: PersonaVersion;
}

export type EnhanceRequest =
  | { kind: 'website'; websiteUrl: string; currentPersona?: Persona | undefined; currentConfig?: PersonaConfig | undefined }
  | { kind: 'storytelling'; currentPersona?: Persona | undefined; currentConfig?: PersonaConfig | undefined }
  | { kind: 'instructions'; instructions?: string | undefined; examples?: InstructionExample[] | undefined; currentPersona?: Persona | undefined; currentConfig?: PersonaConfig | undefined };

/** The draft body's configuration fields as given (contract P12); deprecated brand fields fill `personalityAndVoice` when it is not given. */
export function configOfDraftBody(body: DraftBody): PersonaConfig {
  const config: Record<string, unknown> = {};
  for (const k of CONFIG_FIELDS) if (body[k] !== undefined) config[k] = body[k];
  const brand = [body.brandPersonality, body.brandTraits].filter((s): s is string => typeof s === 'string' && s !== '');
  if (config.personalityAndVoice === undefined && brand.length > 0) config.personalityAndVoice = brand;
  return config as PersonaConfig;
}

/** Whether a persona has no text to serve (a string or every part empty). */
const isEmpty = (p: Persona): boolean => personaText(p).trim() === '';

export function createPersonaService(deps: PersonaServiceDeps) {
  const repo = createPersonaRepo(deps.store.sql);
  // Every write of the family's tables but a template install's (template-port.ts) and a new current
  // version's (insertCurrent below) runs here.
  const unit = <T>(fn: (tx: UnitOfWork, r: ReturnType<typeof createPersonaRepo>) => Promise<T>): Promise<T> =>
    deps.store.unitOfWork((tx) => {
      tx.changed(PERSONA_TOPIC);
      return fn(tx, createPersonaRepo(tx.sql));
    });
  // The versions list by agent and status.
  const lists = deps.reads.cache<{ versions: PersonaVersion[]; current: number | null }>(PERSONA_TOPIC);
  const audit = (tx: UnitOfWork, actor: Actor, agentId: string, action: string, details: Record<string, unknown>) =>
    tx.audit({ orgId: actor.orgId, action, actor: { type: 'user', id: actor.userId }, targetType: 'agent', targetId: agentId, details });
  const model = async <T>(call: Promise<{ ok: true; value: T } | { ok: false; error: Parameters<typeof providerFailure>[0] }>): Promise<T> => {
    const r = await call;
    if (!r.ok) throw providerFailure(r.error);
    return r.value;
  };

  /** A preset: the seeded one of the id, else the built-in one. */
  const presetOf = async (id: string): Promise<Preset | undefined> => (await repo.preset(id)) ?? BUILT_IN_PRESETS.find((p) => p.id === id);

  /**
   * A new current version, in one statement with the other new versions of its agent that came
   * while the agent's last statement ran (store/row-batches.ts; repository.ts insertCurrent): each
   * gets its own number in the order it came, and the last of them is current, as one by one.
   */
  const insertCurrent = rowBatches<NewCurrentVersion, PersonaVersion>(async (agentId, versions) => {
    const created = await repo.insertCurrent(agentId, versions);
    deps.store.changed(PERSONA_TOPIC);
    return created;
  }, { weigh: (v) => personaText(v.persona).length + 1024 });

  /**
   * Stores a new published version, makes it current (served from the agent's next message) and
   * records `action`, in one statement rather than a unit of work (above).
   * `config` undefined: the agent's current configuration (read in the same statement).
   */
  const publishNew = (actor: Actor, agentId: string, persona: Persona, config: PersonaConfig | undefined, action: string): Promise<PersonaVersion> =>
    insertCurrent(agentId, {
      persona, config, createdBy: actor.userId, audit: { id: newId(), orgId: actor.orgId, action, actor: { type: 'user', id: actor.userId }, at: new Date() },
    });

  return {
    async listVersions(agentId: string, status: VersionStatus | 'all'): Promise<{ versions: PersonaVersion[]; current: number | null }> {
      return lists.get(`${agentId}\u0000${status}`, () => repo.listWithCurrent(agentId, status));
    },

    async getVersion(agentId: string, version: number): Promise<{ version: PersonaVersion; current: number | null }> {
      const [found, state] = await Promise.all([repo.get(agentId, version), repo.state(agentId)]);
      if (!found) throw versionNotFound(version, agentId);
      return { version: found, current: state.currentVersion };
    },

    async createVersion(actor: Actor, agentId: string, persona: Persona): Promise<PersonaVersion> {
      return publishNew(actor, agentId, persona, undefined, 'persona.version.created');
    },

    /** Makes an earlier version current at once. A draft is never current: it is published instead. */
    async activate(actor: Actor, agentId: string, version: number): Promise<number> {
      return unit(async (tx, r) => {
        const found = await r.get(agentId, version);
        if (!found) throw versionNotFound(version, agentId);
        if (found.status === 'draft') throw PersonaErrors.PERSONA_VERSION_IS_DRAFT(`Persona version ${version} of agent ${agentId} is the draft: publish it to make it current`);
        await r.setCurrent(agentId, version);
        await audit(tx, actor, agentId, 'persona.version.activated', { version });
        return version;
      });
    },

    async generate(actor: Actor, agentId: string, body: GenerateBody): Promise<PersonaVersion> {
      const { persona } = await model(deps.provider.generatePersona(body));
      const { config } = await repo.state(agentId);
      return publishNew(actor, agentId, persona, config, 'persona.generated');
    },

    /** A new draft, or the existing one (`draft_exists`, nothing generated). The one-draft index settles a race. */
    async createDraft(actor: Actor, agentId: string, body: DraftBody): Promise<DraftAnswer> {
      const existing = await repo.draft(agentId);
      if (existing) return { status: 'draft_exists', draft: existing };
      const generated = await model(deps.provider.draftPersona({ config: configOfDraftBody(body), persona: body.persona }));
      try {
        const draft = await unit(async (tx, r) => {
          const version = await r.takeNumber(agentId);
          const inserted = await r.insert({ agentId, version, status: 'draft', persona: generated.persona, config: generated.config, createdBy: actor.userId });
          await audit(tx, actor, agentId, 'persona.draft.created', { version });
          return inserted;
        });
        return { status: 'draft', draft };
      } catch (e) {
        if (!isDraftConflict(e)) throw e;
        const winner = await repo.draft(agentId);
        if (!winner) throw e;
        return { status: 'draft_exists', draft: winner };
      }
    },

    /** Regenerates the draft: same number, new text and configuration. */
    async regenerateDraft(actor: Actor, agentId: string, body: DraftBody): Promise<PersonaVersion> {
      if (!(await repo.draft(agentId))) throw noDraft(agentId);
      const generated = await model(deps.provider.draftPersona({ config: configOfDraftBody(body), persona: body.persona }));
      return unit(async (tx, r) => {
        const draft = await r.replaceDraft(agentId, generated.persona, generated.config);
        if (!draft) throw noDraft(agentId);
        await audit(tx, actor, agentId, 'persona.draft.regenerated', { version: draft.version });
        return draft;
      });
    },

    /** Publishes the draft numbered `version` and makes it current; an empty text is first built from its configuration. */
    async publish(actor: Actor, agentId: string, version: number): Promise<PersonaVersion> {
      const draft = await repo.get(agentId, version);
      if (!draft || draft.status !== 'draft') throw draftVersionNotFound(version, agentId);
      const persona = isEmpty(draft.persona) ? (await model(deps.provider.composePersona(draft.config))).persona : draft.persona;
      return unit(async (tx, r) => {
        const published = await r.publishDraft(agentId, version, persona);
        if (!published) throw draftVersionNotFound(version, agentId);
        await r.setCurrent(agentId, version);
        await r.setConfig(agentId, published.config);
        await audit(tx, actor, agentId, 'persona.draft.published', { version, builtFromConfig: persona !== draft.persona });
        return published;
      });
    },

    async discard(actor: Actor, agentId: string): Promise<number> {
      return unit(async (tx, r) => {
        const gone = await r.discardDraft(agentId);
        if (!gone) throw noDraft(agentId);
        await audit(tx, actor, agentId, 'persona.draft.discarded', { version: gone.version });
        return gone.version;
      });
    },

    presets: async (): Promise<Preset[]> => catalog(await repo.presets()),

    async preset(id: string): Promise<Preset> {
      const found = RESOURCE_ID.test(id) ? await presetOf(id) : undefined;
      if (!found) throw presetNotFound(id);
      return found;
    },

    /** Copies the preset's configuration into the agent's and names the preset; no version is made. */
    async applyPreset(actor: Actor, agentId: string, presetId: string): Promise<PersonaConfig> {
      const preset = RESOURCE_ID.test(presetId) ? await presetOf(presetId) : undefined;
      if (!preset) throw presetNotFound(presetId);
      return unit(async (tx, r) => {
        const { config } = await r.state(agentId);
        const next: PersonaConfig = { ...config, ...preset.config, presetId: preset.id };
        await r.setConfig(agentId, next);
        await audit(tx, actor, agentId, 'persona.preset.applied', { presetId: preset.id });
        return next;
      });
    },

    /** A suggestion; nothing on the agent changes. Omitted current values are the agent's own. */
    async enhance(agentId: string, req: EnhanceRequest): Promise<{ suggestedPersona: Persona; suggestedConfig: PersonaConfig }> {
      const state = await repo.state(agentId);
      const currentPersona = req.currentPersona ?? (state.currentVersion === null ? null : (await repo.get(agentId, state.currentVersion))?.persona ?? null);
      const currentConfig = req.currentConfig ?? state.config;
      switch (req.kind) {
        case 'website': {
          let websiteText: string | undefined;
          if (deps.provider.readsWebsites) {
            const page = await readWebsite(deps.fetcher, req.websiteUrl);
            if (!page.ok) throw PersonaErrors.WEBSITE_NOT_FETCHABLE(`The website could not be read: ${page.reason.replace(/\.$/, '')}.`, { field: 'websiteUrl' });
            websiteText = page.text;
          }
          return model(deps.provider.enhance({ kind: 'website', websiteUrl: req.websiteUrl, currentPersona, currentConfig, websiteText }));
        }
        case 'storytelling':
          return model(deps.provider.enhance({ kind: 'storytelling', currentPersona, currentConfig }));
        case 'instructions':
          return model(deps.provider.enhance({ kind: 'instructions', currentPersona, currentConfig, instructions: req.instructions, examples: req.examples }));
      }
    },
  };
}

export type PersonaService = ReturnType<typeof createPersonaService>;
