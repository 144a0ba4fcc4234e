/**
 * Template installs (spec 03 parts 2.5, 4.4; contract templates): a version applied onto an agent,
 * re-applied, previewed, set up again and removed.
 *
 * An install is one unit of work: the record, the template's counters, its audit entry and what
 * the other families do for it through the template ports (platform-deps.ts: a persona applied,
 * marketplace skills installed, in-flight runs migrated, the `onInstall` workflow started) commit
 * together, so a refused install leaves nothing anywhere. A re-install whose apply fails is undone
 * the same way, and a second unit then records `apply_failed` on the record it left.
 *
 * Every move of an install's status and setup goes through state.ts (`installTransition`,
 * `setupTransition`).
 *
 * The deploy path applies a template onto an agent it has just minted through `applyInstall`, on
 * its own unit of work (with `minted: true` and, when it fires the hook later, `deferOnInstall`).
 *
 * Creator updates (`publish`): a version published and approved is applied, in the publishing
 * request's unit of work, to every install that consented (`allowCreatorUpdates`). One unit rather
 * than a follow-up job keeps "no partial state" without a second durable object: either the version
 * exists with every consenting install moved or held back with `lastError`, or (a store failure)
 * none of it does. Each install's apply runs under a savepoint, so one that is refused is undone
 * alone and recorded `apply_failed` while the others go on.
 *
 * Modified primitives: the persona is the one primitive an install applies that the agent can change
 * afterwards (the persona routes). The install keeps the digest of the persona it applied; an apply
 * that would write the persona again over a persona the agent changed since is refused
 * `MODIFIED_SINCE_INSTALL` unless the request accepts each such primitive.
 */
import { newId } from '../../model/ids.js';
import { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import { auditActorOf, type Principal } from '../../api/kernel/auth.js';
import type { RunMigration, TemplatePorts } from '../platform-deps.js';
import { invalid, type TemplatesService } from './service.js';
import { TemplateErrors } from './errors.js';
import { InstallErrors, installNotFound } from './install-errors.js';
import { createInstallRepo, type Applied, type InstallRecord, type TriggerState } from './install-repository.js';
import { createTemplatesRepo, type Template, type TemplateVersion } from './repository.js';
import { installTransition, isRefused, setupTransition, type InstallStatus, type SetupState } from './state.js';
import { contentOf } from './views.js';
import type { Json } from './seal.js';
import type { Sql } from '../../store/sql.js';
import type { PublishBody } from './schemas.js';
import { TEMPLATES_TOPIC } from './topic.js';

/** The install body's fields the handler keeps (spec 03 part 4.4); anything else sent is stripped. */
export interface InstallRequest {
  version?: number;
  contentHash?: string;
  envValues?: Record<string, string>;
  connectionSelections?: Record<string, { type: string; connectionId: string }>;
  triggerOverrides?: Record<string, { enabled?: boolean; params?: unknown; input?: unknown }>;
  personaVars?: Record<string, string>;
  editedPersona?: string | Record<string, unknown>;
  overwritePersona?: boolean;
  allowCreatorUpdates?: boolean;
  acceptModifiedPrimitives?: string[];
  acceptWithdrawnParams?: string[];
  migrateRuns?: { strategy: 'resume-on-new' | 'cancel-and-reseed'; keys?: string[]; onIncompatible?: 'leave' | 'cancel'; reason?: string; include?: 'suspended' | 'all' };
  model?: string;
}

export const INSTALL_REQUEST_FIELDS = [
  'version', 'contentHash', 'envValues', 'connectionSelections', 'triggerOverrides', 'personaVars', 'editedPersona', 'overwritePersona',
  'allowCreatorUpdates', 'acceptModifiedPrimitives', 'acceptWithdrawnParams', 'migrateRuns', 'model',
] as const;

/** The known fields of a body, the rest left behind (spec 03 part 4.4: unknown fields, `skipEnvCheck` included, are stripped). */
export function knownInstallFields(body: Record<string, unknown>): InstallRequest {
  const kept: Record<string, unknown> = {};
  for (const k of INSTALL_REQUEST_FIELDS) if (body[k] !== undefined) kept[k] = body[k];
  return kept as InstallRequest;
}

/** The install result (spec 03 part 2.5). */
export interface InstallResult {
  templateId: string; agentId: string; orgId: string; installedVersion: number; appliedAgentVersion: string | null; allowCreatorUpdates: boolean;
  status: InstallStatus; lastError: string | null; appliedBy: string; appliedAt: string; installedBy: string; contentHash: string;
  armedTriggers: string[]; blockedTriggers: Array<{ key: string; reason: string }>; unwatchedTriggers: Array<{ key: string; reason: string }>;
  triggerEndpoints: Array<{ key: string; url: string }>; hiddenParamsCleared: string[]; personaSkipped: boolean;
  onInstallFired: boolean; onInstall: { toolRan: boolean; ok?: boolean }; onInstallDeferred?: boolean; onInstallWorkflowRunId?: string;
  onInstallError?: { code: string; message?: string }; migration?: RunMigration;
}

/** The agent an install applies to, as the kernel knows it. */
export interface InstallTarget { id: string; orgId: string; version: string | null }

export interface ApplyInput {
  principal: Principal;
  template: Template;
  version: TemplateVersion;
  agent: InstallTarget;
  request: InstallRequest;
  /** The agent was created by a deploy of this template (DELETE with `removeAgent=true` may remove it). */
  minted?: boolean;
  /** The deploy fires `onInstall` itself once the agent is ready: the result says `onInstallDeferred`. */
  deferOnInstall?: boolean;
  /** The creator-update fan-out this apply is part of (recorded in its audit entry). */
  autoApplyRunId?: string;
}

/** A fan-out of a published version to the consenting installs: its id, how many it targeted, what each apply gave. */
export interface AutoApplyRun {
  runId: string;
  targetCount: number;
  applied: InstallResult[];
  failed: Array<{ agentId: string; code: string }>;
}

/** The primitive string (`kind/key`) naming an agent's persona in `primitives`, `acceptModifiedPrimitives` and `driftedPrimitives`. */
export const personaPrimitive = (agentId: string): string => `persona/${agentId}`;

/** The hook sections' shape as this implementation reads them: `{workflow, input?}` names a workflow of the agent to start. */
interface Hook { workflow: string; input?: Json }
const hookOf = (section: Json | null): Hook | undefined => {
  if (section === null || typeof section !== 'object' || Array.isArray(section)) return undefined;
  const w = (section as Record<string, Json>).workflow;
  return typeof w === 'string' && w !== '' ? { workflow: w, ...((section as Record<string, Json>).input !== undefined ? { input: (section as Record<string, Json>).input! } : {}) } : undefined;
};

/**
 * The persona a version's `personaTemplate` gives: the section itself (a string or channel-aware
 * object), or `{persona, editable?}`; `{{name}}` in its text filled from `personaVars`.
 */
function personaOf(section: Json | null, req: InstallRequest): { persona: string | Record<string, unknown>; editable: boolean } | undefined {
  if (section === null || section === '' || (typeof section === 'object' && !Array.isArray(section) && Object.keys(section).length === 0)) return undefined;
  if (typeof section !== 'string' && (typeof section !== 'object' || Array.isArray(section))) return undefined;
  const wrapped = typeof section === 'object' && 'persona' in section;
  const body = (wrapped ? (section as Record<string, Json>).persona : section) as Json;
  const editable = wrapped && (section as Record<string, Json>).editable === true;
  const fill = (text: string): string => text.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (m, name: string) => req.personaVars?.[name] ?? m);
  if (typeof body === 'string') return { persona: fill(body), editable };
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    return { persona: Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? fill(v) : v])), editable };
  }
  return undefined;
}

const declaredKeys = (v: TemplateVersion): string[] => (contentOf(v).declaredTriggers ?? []).map((t) => t.key);
const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** A re-install's apply that cannot finish: its unit of work is undone, then `apply_failed` is recorded. */
class ApplyFailed extends Error {
  constructor(readonly reason: string, readonly key: string, message: string) {
    super(message);
  }
}

export interface InstallServiceDeps {
  store: KernelStore;
  templates: TemplatesService;
  ports: TemplatePorts;
  now?: () => Date;
}

export function createInstallService(deps: InstallServiceDeps) {
  const { store, templates, ports } = deps;
  const now = deps.now ?? (() => new Date());
  const repo = createInstallRepo(store.sql);

  /** The primitives the template applied that the agent changed since: the persona, when its digest moved. */
  async function driftOf(sql: Sql, previous: InstallRecord | undefined, agentId: string): Promise<string[]> {
    const recorded = previous?.applied.personaDigest;
    if (recorded === undefined) return [];
    return (await ports.persona.digest(sql, agentId)) === recorded ? [] : [personaPrimitive(agentId)];
  }

  const openEnv = (sealed: string | null): Record<string, string> => (sealed === null ? {} : (JSON.parse(store.secretBox.open(sealed)) as Record<string, string>));

  /** The trigger states an apply leaves: on a first install `triggerOverrides` alone arms; on a re-install omitted keys keep their state. */
  function triggersOf(v: TemplateVersion, req: InstallRequest, previous: InstallRecord | undefined): Record<string, TriggerState> {
    const keys = declaredKeys(v);
    const overrides = req.triggerOverrides ?? {};
    const unknown = Object.keys(overrides).find((k) => !keys.includes(k));
    if (unknown !== undefined) throw invalid(`triggerOverrides.${unknown}`, `triggerOverrides names ${unknown}, which version ${v.version} does not declare`);
    const out: Record<string, TriggerState> = {};
    for (const key of keys) {
      const was = previous?.triggers[key];
      const o = overrides[key];
      const enabled = o?.enabled ?? (o !== undefined && previous === undefined ? false : was?.enabled ?? false);
      const params = o?.params ?? was?.params;
      const input = o?.input ?? was?.input;
      out[key] = { enabled, ...(params !== undefined ? { params } : {}), ...(input !== undefined ? { input } : {}) };
    }
    return out;
  }

  /** Starts the `onInstall` workflow on the unit of work; the setup state it leaves (null: no hook). */
  async function fireHook(tx: UnitOfWork, hook: Hook | undefined, principal: Principal, agent: InstallTarget): Promise<SetupState | null> {
    if (!hook) return null;
    const started = await ports.workflows.start(tx, { orgId: agent.orgId, userId: principal.userId, agentId: agent.id, workflowName: hook.workflow, ...(hook.input !== undefined ? { input: hook.input } : {}) });
    const next = started.outcome === 'started'
      ? setupTransition(null, { type: 'started', runId: started.runId })
      : started.outcome === 'not-found'
        ? setupTransition(null, { type: 'failed', code: 'workflow-not-materialized', error: `The agent has no active workflow ${hook.workflow}` })
        : setupTransition(null, { type: 'failed', code: 'start-refused', error: `${started.code}: ${started.message}` });
    return next as SetupState;
  }

  const hookFields = (setup: SetupState | null, fired: boolean): Pick<InstallResult, 'onInstallFired' | 'onInstall' | 'onInstallWorkflowRunId' | 'onInstallError'> => {
    if (!fired || setup === null) return { onInstallFired: false, onInstall: { toolRan: false } };
    if (setup.status === 'ok') return { onInstallFired: true, onInstall: { toolRan: true, ok: true }, onInstallWorkflowRunId: setup.workflowRunId };
    return { onInstallFired: true, onInstall: { toolRan: false, ok: false }, onInstallError: { code: setup.code, message: setup.error } };
  };

  /**
   * Applies `input.version` onto the agent on `tx` (the caller's unit of work): the checks that
   * refuse an install (seal, env contract, install policy, triggers), then the persona, the
   * marketplace skills, the run migration, the `onInstall` hook and the record. Throws the refusal;
   * writes nothing of its own outside `tx`. Call `afterCommit` with the result once `tx` committed.
   */
  async function applyInstall(tx: UnitOfWork, input: ApplyInput): Promise<InstallResult> {
    const { principal, template: t, version: v, agent, request: req } = input;
    const r = createInstallRepo(tx.sql);
    templates.checkSeal(v, req.contentHash);
    const previous = await r.get(t.id, agent.id, true);
    if ((v.sections.installPolicy as { perWorkspace?: string } | null)?.perWorkspace === 'single') {
      const others = await r.othersInOrg(t.id, agent.orgId, agent.id);
      if (others.length > 0) {
        throw TemplateErrors.INSTALL_POLICY_SINGLE(`Template ${t.id} allows one install per organization; agent ${others[0]} has it already`);
      }
    }
    const previousEnv = previous ? openEnv(previous.sealedEnv) : {};
    const env = { ...previousEnv, ...(req.envValues ?? {}) };
    templates.requireEnv(v, env);
    const triggers = triggersOf(v, req, previous);
    const persona = personaOf(v.sections.personaTemplate, req);
    if (req.editedPersona !== undefined && !persona?.editable) {
      throw invalid('editedPersona', `the persona template of version ${v.version} is not editable`);
    }
    const at = now();
    const versionMoved = previous === undefined || previous.installedVersion !== v.version || previous.manifestSeal !== v.manifestSeal;
    const wantPersona = persona !== undefined && (versionMoved || req.overwritePersona === true || req.editedPersona !== undefined);
    if (wantPersona) {
      const accepted = req.acceptModifiedPrimitives ?? [];
      const modified = (await driftOf(tx.sql, previous, agent.id)).filter((k) => !accepted.includes(k));
      if (modified.length > 0) {
        throw TemplateErrors.MODIFIED_SINCE_INSTALL(
          `Agent ${agent.id} changed ${modified.join(', ')} since template ${t.id} applied it; name it in acceptModifiedPrimitives to apply version ${v.version} over it`,
          { primitives: modified },
        );
      }
    }
    // A persona this template applied (unchanged since, or its change accepted above) is the template's to replace.
    const ownsPersona = previous?.applied.personaDigest !== undefined;

    // The other families' parts, on this unit of work.
    let skillsInstalled = 0;
    for (const s of contentOf(v).marketplaceSkills ?? []) {
      const done = await ports.skills.install(tx, { orgId: agent.orgId, userId: principal.userId, agentId: agent.id, skillId: s.skillId, ...(s.version !== undefined ? { version: s.version } : {}), ...(req.envValues !== undefined ? { envValues: env } : {}) });
      if (done.outcome === 'refused') throw new ApplyFailed(done.code, s.skillId, `Marketplace skill ${s.skillId} could not be installed: ${done.message}`);
      if (done.outcome === 'installed') skillsInstalled++;
    }
    const personaDone = wantPersona
      ? await ports.persona.apply(tx, {
        orgId: agent.orgId, userId: principal.userId, agentId: agent.id, persona: req.editedPersona ?? persona!.persona,
        overwrite: req.overwritePersona === true || req.editedPersona !== undefined || ownsPersona,
      })
      : undefined;
    const personaDigest = personaDone?.applied === true ? (await ports.persona.digest(tx.sql, agent.id)) ?? undefined : previous?.applied.personaDigest;
    const migration = req.migrateRuns
      ? await ports.workflows.migrateRuns(tx, {
        orgId: agent.orgId, userId: principal.userId, agentId: agent.id, strategy: req.migrateRuns.strategy, onIncompatible: req.migrateRuns.onIncompatible ?? 'leave',
        include: req.migrateRuns.include ?? 'all', ...(req.migrateRuns.keys !== undefined ? { workflowNames: req.migrateRuns.keys } : {}),
        ...(req.migrateRuns.reason !== undefined ? { reason: req.migrateRuns.reason } : {}),
      })
      : undefined;
    const hook = hookOf(v.sections.onInstall);
    const fire = previous === undefined && input.deferOnInstall !== true;
    const setup = fire ? await fireHook(tx, hook, principal, agent) : previous?.setup ?? null;

    const model = req.model === undefined ? previous?.model ?? null : req.model === '' ? null : req.model;
    const allowCreatorUpdates = req.allowCreatorUpdates ?? previous?.allowCreatorUpdates ?? false;
    const applied: Applied = {
      version: v.version, seal: v.manifestSeal, model, envNames: Object.keys(env).sort(), personaApplied: personaDone?.applied === true,
      ...(personaDigest !== undefined ? { personaDigest } : {}),
    };
    const moved = migration !== undefined && (migration.counts.resumed + migration.counts.cancelled + migration.counts.reseeded) > 0;
    const changed = previous === undefined || versionMoved || !sameJson(previous.triggers, triggers) || previous.model !== model
      || previous.allowCreatorUpdates !== allowCreatorUpdates || applied.personaApplied || skillsInstalled > 0 || moved || !sameJson(previousEnv, env)
      || previous.status === 'apply_failed';
    const status = installTransition(previous?.status ?? null, { type: changed ? 'applied' : 'unchanged' });
    if (status === null || isRefused(status)) throw new AppError(500, 'INSTALL_STATE', 'an apply always leaves an install');

    const record: InstallRecord = {
      templateId: t.id, agentId: agent.id, orgId: agent.orgId, installedVersion: v.version, appliedAgentVersion: agent.version, allowCreatorUpdates,
      status, lastError: null, appliedBy: changed ? principal.userId : previous!.appliedBy, appliedAt: changed ? at : previous!.appliedAt,
      installedBy: previous?.installedBy ?? principal.userId, installedAt: previous?.installedAt ?? at, manifestSeal: v.manifestSeal, triggers,
      sealedEnv: Object.keys(env).length === 0 ? null : sameJson(previousEnv, env) && previous ? previous.sealedEnv : store.secretBox.seal(JSON.stringify(env)),
      model, applied, minted: previous?.minted ?? input.minted === true, setup,
    };
    await r.upsert(record);
    if (previous === undefined) {
      await createTemplatesRepo(tx.sql).countInstall(t.id, { installs: 1, active: 1 }, at);
      tx.changed(TEMPLATES_TOPIC);
    }
    await tx.audit({
      orgId: agent.orgId, action: previous === undefined ? 'templates.install.created' : 'templates.install.updated', actor: auditActorOf(principal),
      targetType: 'agent', targetId: agent.id,
      details: {
        templateId: t.id, version: v.version, status, envValueNames: applied.envNames, armedTriggers: Object.keys(triggers).filter((k) => triggers[k]!.enabled),
        personaApplied: applied.personaApplied, skillsInstalled, ...(migration ? { migrationIds: migration.migrationIds } : {}), ...(input.minted ? { minted: true } : {}),
        ...(input.autoApplyRunId !== undefined ? { autoApplyRunId: input.autoApplyRunId } : {}),
      },
    });
    return {
      ...resultOf(record, persona !== undefined && personaDone?.applied !== true && wantPersona),
      ...hookFields(setup, fire),
      ...(input.deferOnInstall === true && previous === undefined ? { onInstallDeferred: true } : {}),
      ...(migration ? { migration } : {}),
    };
  }

  const resultOf = (i: InstallRecord, personaSkipped: boolean): InstallResult => ({
    templateId: i.templateId, agentId: i.agentId, orgId: i.orgId, installedVersion: i.installedVersion, appliedAgentVersion: i.appliedAgentVersion,
    allowCreatorUpdates: i.allowCreatorUpdates, status: i.status, lastError: i.lastError, appliedBy: i.appliedBy, appliedAt: i.appliedAt.toISOString(),
    installedBy: i.installedBy, contentHash: i.manifestSeal,
    armedTriggers: Object.entries(i.triggers).filter(([, s]) => s.enabled).map(([k]) => k),
    // The embedded default arms every enabled trigger (contract templates): none is blocked or unwatched, and none has an endpoint of its own.
    blockedTriggers: [], unwatchedTriggers: [], triggerEndpoints: [], hiddenParamsCleared: [], personaSkipped,
    onInstallFired: false, onInstall: { toolRan: false },
  });

  /** After the unit of work holding `applyInstall` committed: the executor is told of a run the hook queued. */
  const afterCommit = (result: Pick<InstallResult, 'onInstallWorkflowRunId' | 'migration'>): void => {
    if (result.onInstallWorkflowRunId !== undefined || (result.migration?.counts.reseeded ?? 0) > 0) ports.workflows.wake();
  };

  /** The version an install takes; a re-install of the version the agent has stays allowed once it is deprecated. */
  async function versionFor(tx: UnitOfWork, t: Template, agentId: string, asked: number | undefined): Promise<TemplateVersion> {
    try {
      return await templates.installableVersion(t, asked, 'latest', tx.sql);
    } catch (e) {
      if (!(e instanceof AppError) || e.code !== 'TEMPLATE_VERSION_DEPRECATED') throw e;
      const current = await createInstallRepo(tx.sql).get(t.id, agentId);
      const number = asked ?? t.latestVersion;
      if (current?.installedVersion !== number) throw e;
      return templates.readVersion(t.id, number, tx.sql);
    }
  }

  /** The install and its template, when the caller sees the template and the agent has it (else 404). */
  async function installed(p: Principal, templateId: string, agentId: string): Promise<{ template: Template; install: InstallRecord }> {
    const template = await templates.visibleTemplate(p, templateId);
    const install = await repo.get(templateId, agentId);
    if (!install) throw installNotFound(templateId, agentId);
    return { template, install };
  }

  /**
   * Applies `v` (just published on `tx`) to each install of `t` that consented to creator updates,
   * each under a savepoint: a refusal (an env value the version now requires, a modified persona, a
   * skill refused) undoes that apply alone and leaves the install at its version, `apply_failed`
   * with `lastError`. A store failure propagates and undoes the publish with it. Undefined when no
   * install consented (no fan-out happened).
   */
  async function autoApply(tx: UnitOfWork, principal: Principal, t: Template, v: TemplateVersion): Promise<AutoApplyRun | undefined> {
    const r = createInstallRepo(tx.sql);
    const targets = await r.consenting(t.id, v.version);
    if (targets.length === 0) return undefined;
    const run: AutoApplyRun = { runId: `tplar_${newId()}`, targetCount: targets.length, applied: [], failed: [] };
    for (const target of targets) {
      await r.autoApplySavepoint();
      try {
        const result = await applyInstall(tx, {
          principal, template: t, version: v, agent: { id: target.agentId, orgId: target.orgId, version: target.agentVersion }, request: {}, autoApplyRunId: run.runId,
        });
        await r.releaseAutoApplySavepoint();
        run.applied.push(result);
      } catch (e) {
        if (!(e instanceof AppError) && !(e instanceof ApplyFailed)) throw e;
        await r.rollbackToAutoApplySavepoint();
        const code = e instanceof AppError ? e.code : e.reason;
        const status = installTransition(target.status, { type: 'apply_failed' });
        if (status === null || isRefused(status)) throw e;
        await r.setStatus(t.id, target.agentId, status, `${code}: ${e.message}`);
        const fields = e instanceof AppError ? (e.details ?? {}) : { key: e.key };
        await tx.audit({
          orgId: target.orgId, action: 'templates.install.failed', actor: auditActorOf(principal), targetType: 'agent', targetId: target.agentId,
          details: { templateId: t.id, version: v.version, reason: code, autoApplyRunId: run.runId, ...fields },
        });
        run.failed.push({ agentId: target.agentId, code });
      }
    }
    await tx.audit({
      orgId: t.creatorOrgId, action: 'templates.autoapply.completed', actor: auditActorOf(principal), targetType: 'template', targetId: t.id,
      details: { autoApplyRunId: run.runId, version: v.version, targetCount: run.targetCount, appliedCount: run.applied.length, failed: run.failed },
    });
    return run;
  }

  return {
    applyInstall,
    afterCommit,
    autoApply,

    /**
     * POST /marketplace/templates/:templateId/versions: publishes, then (unless `skipAutoApply`, or
     * the version awaits review) fans the version out to the consenting installs in the same unit of work.
     */
    async publish(p: Principal, templateId: string, body: PublishBody): Promise<{ version: TemplateVersion; autoApply?: AutoApplyRun }> {
      let run: AutoApplyRun | undefined;
      const version = await templates.publish(p, templateId, body, async (tx, t, v) => {
        if (body.skipAutoApply === true || v.approvalStatus !== 'approved') return;
        run = await autoApply(tx, p, t, v);
      });
      for (const result of run?.applied ?? []) afterCommit(result);
      return { version, ...(run ? { autoApply: run } : {}) };
    },

    /** POST /marketplace/templates/:templateId/install/:agentId */
    async install(p: Principal, templateId: string, agent: InstallTarget, req: InstallRequest): Promise<InstallResult> {
      const visible = await templates.visibleTemplate(p, templateId);
      let result: InstallResult;
      try {
        result = await store.unitOfWork(async (tx) => {
          // The template's row held: installs of one template decide the install policy one at a time.
          if (!(await createInstallRepo(tx.sql).lockTemplate(templateId))) throw TemplateErrors.TEMPLATE_NOT_FOUND(`Template ${templateId} not found`);
          const t = (await createTemplatesRepo(tx.sql).visible(templateId, [visible.creatorOrgId])) ?? visible;
          const v = await versionFor(tx, t, agent.id, req.version);
          return applyInstall(tx, { principal: p, template: t, version: v, agent, request: req });
        });
      } catch (e) {
        if (!(e instanceof ApplyFailed)) throw e;
        const previous = await repo.get(templateId, agent.id);
        if (!previous) throw InstallErrors.TEMPLATE_APPLY_FAILED(e.message, { reason: e.reason, key: e.key });
        // The apply was undone; the record it leaves says it failed (state.ts), its version unchanged.
        const status = installTransition(previous.status, { type: 'apply_failed' });
        if (status === null || isRefused(status)) throw e;
        await store.unitOfWork(async (tx) => {
          await createInstallRepo(tx.sql).setStatus(templateId, agent.id, status, e.message);
          await tx.audit({ orgId: agent.orgId, action: 'templates.install.failed', actor: auditActorOf(p), targetType: 'agent', targetId: agent.id, details: { templateId, reason: e.reason, key: e.key } });
        });
        return { ...resultOf({ ...previous, status, lastError: e.message }, false), onInstallFired: false, onInstall: { toolRan: false } };
      }
      afterCommit(result);
      return result;
    },

    /** GET /agents/:agentId/templates and /marketplace/templates/agent/:agentId: the agent's installs, oldest first. */
    async ofAgent(agentId: string) {
      return repo.ofAgent(agentId);
    },

    /** PATCH /agents/:agentId/templates/:templateId */
    async setConsent(p: Principal, templateId: string, agentId: string, allow: boolean) {
      await installed(p, templateId, agentId);
      await store.unitOfWork(async (tx) => {
        const r = createInstallRepo(tx.sql);
        const current = await r.get(templateId, agentId, true);
        if (!current) throw installNotFound(templateId, agentId);
        await r.setConsent(templateId, agentId, allow);
        await tx.audit({ orgId: current.orgId, action: 'templates.install.updated', actor: auditActorOf(p), targetType: 'agent', targetId: agentId, details: { templateId, allowCreatorUpdates: allow } });
      });
      return (await repo.ofAgent(agentId)).find((i) => i.templateId === templateId)!;
    },

    /** POST /agents/:agentId/templates/:templateId/setup/retry */
    async retrySetup(p: Principal, templateId: string, agent: InstallTarget) {
      const { install } = await installed(p, templateId, agent.id);
      const version = await templates.readVersion(templateId, install.installedVersion);
      const hook = hookOf(version.sections.onInstall);
      if (!hook) return { startWorkflow: { outcome: 'not-declared' as const } };
      const answer = await store.unitOfWork(async (tx) => {
        const r = createInstallRepo(tx.sql);
        const current = await r.get(templateId, agent.id, true);
        if (!current) throw installNotFound(templateId, agent.id);
        const next = setupTransition(current.setup, { type: 'retried' });
        if (isRefused(next)) {
          const runId = current.setup?.status === 'ok' ? current.setup.workflowRunId : undefined;
          return { startWorkflow: { outcome: 'already-started' as const, ...(runId !== undefined ? { runId } : {}) } };
        }
        const setup = (await fireHook(tx, hook, p, agent))!;
        await r.setSetup(templateId, agent.id, setup);
        await tx.audit({ orgId: agent.orgId, action: 'templates.setup.retried', actor: auditActorOf(p), targetType: 'agent', targetId: agent.id, details: { templateId, status: setup.status } });
        return {
          ...hookFields(setup, true),
          startWorkflow: setup.status === 'ok' ? { outcome: 'started' as const, runId: setup.workflowRunId } : { outcome: 'failed' as const, error: { code: setup.code, message: setup.error } },
        };
      });
      if (answer.startWorkflow.outcome === 'started') ports.workflows.wake();
      return answer;
    },

    /** GET /agents/:agentId/templates/:templateId/update-preview */
    async updatePreview(p: Principal, templateId: string, agentId: string, toVersion: number | undefined) {
      const { template, install } = await installed(p, templateId, agentId);
      const from = await templates.readVersion(templateId, install.installedVersion);
      const to = await templates.readVersion(templateId, toVersion ?? template.latestApprovedVersion ?? template.latestVersion);
      const sections = (Object.keys(to.sections) as Array<keyof TemplateVersion['sections']>).filter((k) => !sameJson(from.sections[k], to.sections[k]));
      const fromEnv = from.envContract ?? {};
      const toEnv = to.envContract ?? {};
      const toKeys = declaredKeys(to);
      const fromSkills = (contentOf(from).marketplaceSkills ?? []).map((s) => s.skillId);
      const toSkills = (contentOf(to).marketplaceSkills ?? []).map((s) => s.skillId);
      return {
        fromVersion: from.version, toVersion: to.version, ...(to.changelog !== null ? { changelog: to.changelog } : {}), sections,
        envContract: {
          added: Object.keys(toEnv).filter((k) => !(k in fromEnv)), removed: Object.keys(fromEnv).filter((k) => !(k in toEnv)),
          newlyRequired: Object.keys(toEnv).filter((k) => toEnv[k]!.required && !fromEnv[k]?.required),
        },
        // What a person consents to: the connections, triggers and skills the template reaches with.
        consentSurfaceChanged: !sameJson(from.sections.connections, to.sections.connections) || !sameJson(declaredKeys(from), toKeys) || !sameJson(fromSkills, toSkills),
        codeChanged: from.contentHash !== to.contentHash,
        scopeDelta: { added: toSkills.filter((s) => !fromSkills.includes(s)), removed: fromSkills.filter((s) => !toSkills.includes(s)) },
        armedTriggersSurviving: Object.entries(install.triggers).filter(([k, s]) => s.enabled && toKeys.includes(k)).map(([k]) => k),
        // The primitives an install of `to` would be refused over (MODIFIED_SINCE_INSTALL): only an apply that writes the persona again looks.
        driftedPrimitives: personaOf(to.sections.personaTemplate, {}) !== undefined && (to.version !== install.installedVersion || to.manifestSeal !== install.manifestSeal)
          ? await driftOf(store.sql, install, agentId)
          : [],
      };
    },

    /** GET /marketplace/templates/:templateId/installs/:agentId/removal-preview */
    async removalPreview(p: Principal, templateId: string, agentId: string) {
      const { install } = await installed(p, templateId, agentId);
      const all = await repo.ofAgent(agentId);
      const agent = await store.auth.agent(agentId);
      const others = all.filter((i) => i.templateId !== templateId).map((i) => ({ templateId: i.templateId, displayName: i.displayName }));
      return {
        agentId, agentName: agent?.name ?? '', minted: install.minted, soleInstall: others.length === 0, otherTemplates: others,
        // The embedded platform holds no agent members, workspace roles, rooms, connections or billing.
        members: [], memberTotal: 0, workspaceRoleHolders: [], workspaceRoleHolderTotal: 0, rooms: [], roomTotal: 0,
        automations: Object.entries(install.triggers).filter(([, s]) => s.enabled).map(([key]) => ({ key, kind: 'trigger' })),
        connections: [], billing: { activeSubscriptions: 0 },
        warnings: install.minted ? ['removeAgent=true removes the agent this template created, with its configuration'] : [],
      };
    },

    /** DELETE /marketplace/templates/:templateId/installs/:agentId */
    async uninstall(p: Principal, templateId: string, agent: InstallTarget, removeAgent: boolean) {
      const { install } = await installed(p, templateId, agent.id);
      if (removeAgent && !install.minted) {
        throw TemplateErrors['agent-not-template-minted'](`Agent ${agent.id} was not created by a deploy of template ${templateId}; it is not removed`);
      }
      const version = await templates.readVersion(templateId, install.installedVersion).catch(() => undefined);
      const hook = version ? hookOf(version.sections.onUninstall) : undefined;
      const answer = await store.unitOfWork(async (tx) => {
        const r = createInstallRepo(tx.sql);
        const current = await r.get(templateId, agent.id, true);
        const next = installTransition(current?.status ?? null, { type: 'removed' });
        if (!current || isRefused(next)) throw installNotFound(templateId, agent.id);
        await r.remove(templateId, agent.id);
        await createTemplatesRepo(tx.sql).countInstall(templateId, { installs: 0, active: -1 }, now());
        tx.changed(TEMPLATES_TOPIC);
        // The uninstall hook is fail-soft (spec 03 part 4.4): its outcome is reported, never a refusal. An agent removed with the install runs nothing more.
        let onUninstall: { ran: boolean; ok?: boolean; error?: string } | undefined;
        if (hook && !removeAgent) {
          const started = await ports.workflows.start(tx, { orgId: agent.orgId, userId: p.userId, agentId: agent.id, workflowName: hook.workflow, ...(hook.input !== undefined ? { input: hook.input } : {}) });
          onUninstall = started.outcome === 'started' ? { ran: true, ok: true } : { ran: false, ok: false, error: started.outcome === 'not-found' ? 'workflow-not-materialized' : started.code };
        } else if (hook) {
          onUninstall = { ran: false };
        }
        const agentRemoved = removeAgent ? await tx.tenancy.removeAgent(agent.orgId, agent.id) : undefined;
        await tx.audit({
          orgId: agent.orgId, action: 'templates.install.removed', actor: auditActorOf(p), targetType: 'agent', targetId: agent.id,
          details: { templateId, version: current.installedVersion, ...(agentRemoved !== undefined ? { agentRemoved } : {}) },
        });
        return { success: true, ...(onUninstall ? { onUninstall } : {}), ...(agentRemoved !== undefined ? { agentRemoved } : {}) };
      });
      if (answer.onUninstall?.ran === true) ports.workflows.wake();
      return answer;
    },
  };
}

export type InstallService = ReturnType<typeof createInstallService>;
