/**
 * Template deploys (spec 03 part 4.4; contract templates): a new agent minted in the target
 * organization from a base-agent template, then the template installed on it by the deploy job
 * (deploy-job.ts). Also the deploy sessions, the eligible targets and the install requests.
 *
 * A deploy's `Idempotency-Key` belongs to the calling user and the route. The key is claimed in
 * the minting unit of work, before the agent is minted, and completed in it: the agent, the deploy
 * row and the key's outcome (`{deployId}`) commit together or not at all. Two deploys with one key
 * at once: the key's primary key decides (the second claim waits on the first's row until it
 * commits, then finds the outcome), so one agent is minted and both answer the one deploy. What a
 * request answers, 201 with the result or 202, is the deploy's `answer_status` (set once,
 * deploy-migrations.ts), the same for the first request and every retry.
 */
import { newId } from '../../model/ids.js';
import { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import { auditActorOf, authorizeOrgScopes, isPerson, scopesSatisfy, type Principal } from '../../api/kernel/auth.js';
import { insufficientScope } from '../../api/kernel/errors.js';
import { refuseIfArchived } from '../../api/kernel/archived.js';
import { idempotencyKeyReused, requestFingerprint } from '../../api/kernel/idempotency.js';
import { createDeployRepo, type DeployRow, type DeploySession } from './deploy-repository.js';
import type { DeployJob, DeployJobRequest } from './deploy-job.js';
import { DeployErrors } from './deploy-errors.js';
import { noVersion, TemplateErrors } from './errors.js';
import type { Template, TemplateVersion } from './repository.js';
import type { TemplatesService } from './service.js';
import { isDeployTerminal } from './state.js';

export const DEPLOY_ROUTE = 'POST /marketplace/templates/:templateId/deploy';
export const DEPLOY_SCOPE = 'automations:write';
export const READ_SCOPE = 'marketplace:read';

/** The template and version a deploy installs, or a deploy session is about. */
export interface DeployTarget {
  template: Template;
  version: TemplateVersion;
}

/** The catalog's reads a deploy builds on (service.ts). */
export type DeployCatalog = Pick<TemplatesService, 'visibleTemplate' | 'installableVersion' | 'readVersion' | 'checkSeal' | 'requireEnv'>;

/** The install side's read a deploy needs (the install service). */
export interface DeployInstalls {
  /** The agents of `orgId` that have the template installed. */
  installedAgents(templateId: string, orgId: string): Promise<Set<string>>;
}

/** The deploy body (spec 03 part 4.4): the install fields plus `agentDisplayName` and `orgId`. */
export interface DeployBody {
  version?: number;
  contentHash?: string;
  envValues?: Record<string, string>;
  agentDisplayName?: string;
  orgId?: string;
  [field: string]: unknown;
}

/** The install fields a deploy carries to its install; anything else a body holds is left out. */
const INSTALL_FIELDS = [
  'version', 'contentHash', 'envValues', 'connectionSelections', 'triggerOverrides', 'personaVars', 'editedPersona', 'overwritePersona',
  'allowCreatorUpdates', 'acceptModifiedPrimitives', 'acceptWithdrawnParams', 'migrateRuns', 'model',
] as const;

export interface DeployAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface DeployView {
  deployId: string;
  status: string;
  stage: string;
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
}

export interface EligibleTarget {
  agentId: string;
  name: string;
  orgId: string;
  installable: boolean;
  reason?: 'already-installed' | 'shared-agent-requires-org-admin' | 'apply-in-progress';
}

export interface DeployServiceOptions {
  store: KernelStore;
  catalog: DeployCatalog;
  installs: DeployInstalls;
  job: Pick<DeployJob, 'wake' | 'events'>;
  /** TEMPLATE_DEPLOY_ANSWER_WAIT_MS: how long a deploy request waits for the deploy to end (201) before it answers 202. */
  answerWaitMs: number;
}

/** The deploy result (spec 03 part 2.5) from the install result on the minted agent. */
export function deployResultOf(deploy: Pick<DeployRow, 'agent_id' | 'org_id'>, install: Record<string, unknown>): Record<string, unknown> {
  const onInstall = install.onInstall as { toolRan?: unknown } | undefined;
  return {
    agentId: deploy.agent_id, orgId: deploy.org_id, agentVersion: install.appliedAgentVersion ?? null, status: install.status,
    armedTriggers: install.armedTriggers ?? [], triggerEndpoints: install.triggerEndpoints ?? [], blockedTriggers: install.blockedTriggers ?? [],
    unwatchedTriggers: install.unwatchedTriggers ?? [], personaSkipped: install.personaSkipped ?? false, lastError: install.lastError ?? null,
    hiddenParamsCleared: install.hiddenParamsCleared ?? [], onInstallFired: install.onInstallFired ?? false,
    onInstall: { toolRan: onInstall?.toolRan ?? false }, onInstallWorkflowRunId: install.onInstallWorkflowRunId ?? null,
    onInstallError: install.onInstallError ?? null,
  };
}

/** A typed key without `scope` is refused; a person holds the marketplace scopes wherever it is a member (CONTRACT part 6). */
function requireKeyScope(p: Principal, scope: string): void {
  if (p.scopes !== null && !scopesSatisfy(p.scopes, scope)) throw insufficientScope('organization', p.keyOrgId ?? p.userId, scope);
}

export function createDeployService(o: DeployServiceOptions) {
  const { store, catalog } = o;
  const repo = createDeployRepo(store.sql);

  /**
   * The organization a request acts on when it names none: a key's own; a person's first
   * organization where it is admin, else its first (by id); undefined for a person with none.
   */
  async function defaultOrg(p: Principal): Promise<string | undefined> {
    if (p.keyOrgId !== undefined) return p.keyOrgId;
    return repo.defaultOrgOf(p.userId);
  }

  /** The template and the version a session is about: the one asked for, else the one a deploy would take (deprecated or not). */
  async function sessionTarget(p: Principal, templateId: string, asked: number | undefined): Promise<DeployTarget> {
    const template = await catalog.visibleTemplate(p, templateId);
    const number = asked ?? template.latestApprovedVersion ?? template.latestVersion;
    if (number === 0) throw noVersion(templateId);
    return { template, version: await catalog.readVersion(templateId, number) };
  }

  /** Waits until the deploy's answer is decided: 201 when it ends within the window, else 202 (deploy-migrations.ts). */
  async function answerOf(deployId: string): Promise<DeployAnswer> {
    for (;;) {
      const a = await repo.answer(deployId, o.answerWaitMs);
      if (!a) throw DeployErrors.TEMPLATE_DEPLOY_NOT_FOUND(`Deploy ${deployId} not found`);
      if (a.answerStatus === null && a.due) {
        await repo.answerAccepted(deployId, o.answerWaitMs);
        continue;
      }
      if (a.answerStatus === 202) return { status: 202, body: { deployId } };
      if (a.answerStatus === 201) {
        const row = (await repo.find(deployId))!;
        if (row.status === 'succeeded') return { status: 201, body: { deployId, ...(row.result ?? {}) } };
        // Ended refused within the window: every request with the key answers the refusal.
        const { code, message, ...fields } = (row.error ?? {}) as { code?: string; message?: string };
        throw new AppError(row.error_status ?? 500, code ?? 'DEPLOY_FAILED', message ?? `Deploy ${deployId} failed`, { deployId, ...fields });
      }
      // Undecided: this process's job tells when it ends a deploy; another process's is looked at again shortly.
      await endedOrSoon(deployId);
    }
  }

  function endedOrSoon(deployId: string): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        o.job.events.off('ended', onEnded);
        resolve();
      };
      const onEnded = (id: string) => {
        if (id === deployId) done();
      };
      const timer = setTimeout(done, 100);
      o.job.events.on('ended', onEnded);
    });
  }

  async function mint(tx: UnitOfWork, p: Principal, target: DeployTarget, body: DeployBody, orgId: string | undefined, claim: { scope: string; key: string; claimId: string }) {
    const org = orgId ?? (await tx.tenancy.createOrg({ name: `Personal (${p.userId})`, adminUserId: p.userId })).id;
    const agent = await tx.tenancy.createAgent({ orgId: org, name: body.agentDisplayName ?? target.template.displayName, visibility: 'org' });
    const deployId = `dpl_${newId().toLowerCase()}`;
    const install: Record<string, unknown> = {};
    for (const f of INSTALL_FIELDS) if (body[f] !== undefined) install[f] = body[f];
    install.version = target.version.version;
    // Env values are secrets: kept sealed for the job, never in a read.
    if (install.envValues !== undefined) install.envValues = store.secretBox.seal(JSON.stringify(install.envValues));
    await createDeployRepo(tx.sql).insert({
      id: deployId, orgId: org, templateId: target.template.id, version: target.version.version, requestedBy: p.userId,
      keyScope: claim.scope, idempotencyKey: claim.key, agentId: agent.id, request: install,
    });
    await tx.idempotency.complete({ scope: claim.scope, route: DEPLOY_ROUTE, key: claim.key, claimId: claim.claimId }, { status: 202, body: { deployId } });
    await tx.audit({
      orgId: org, action: 'templates.deploy.started', actor: auditActorOf(p), targetType: 'template_deploy', targetId: deployId,
      details: { templateId: target.template.id, version: target.version.version, agentId: agent.id, personalOrg: orgId === undefined },
    });
    return deployId;
  }

  return {
    repo,

    /** Deploys `templateId` (spec 03 part 4.4) under the caller's `key`; the answer every request with the key gets. */
    async deploy(p: Principal, templateId: string, body: DeployBody, key: string): Promise<DeployAnswer> {
      const scope = `user:${p.userId}`;
      const ref = { scope, route: DEPLOY_ROUTE, key };
      const fingerprint = requestFingerprint({ templateId, body });
      // A retry of a deploy already made answers it whatever changed since (a version deprecated,
      // the caller's access): the outcome stored with the key. Only a fast path: the claim decides.
      const known = await store.idempotency.find(ref);
      if (known && known.state === 'completed' && known.expiresAt > new Date()) {
        if (known.fingerprint !== fingerprint) throw idempotencyKeyReused({ deployId: (known.outcome?.body as { deployId?: string } | undefined)?.deployId ?? null });
        return answerOf((known.outcome!.body as { deployId: string }).deployId);
      }
      const orgId = body.orgId ?? (await defaultOrg(p));
      if (orgId !== undefined) {
        await authorizeOrgScopes(store, p, orgId, { required: DEPLOY_SCOPE });
        await refuseIfArchived(store, orgId);
      } else requireKeyScope(p, DEPLOY_SCOPE);
      const template = await catalog.visibleTemplate(p, templateId);
      if (!template.sourceBaseAgentId) {
        throw TemplateErrors.TEMPLATE_NOT_DEPLOYABLE(`Template ${templateId} is not made from a base agent and cannot be deployed`, { sourceAgentId: template.sourceAgentId ?? undefined });
      }
      const version = await catalog.installableVersion(template, body.version, 'latestApproved');
      catalog.checkSeal(version, body.contentHash);
      catalog.requireEnv(version, body.envValues);
      const target = { template, version };
      const outcome = await store.unitOfWork(async (tx) => {
        const claim = await tx.idempotency.claim({ ...ref, fingerprint });
        switch (claim.kind) {
          case 'replay':
            return { deployId: (claim.body as { deployId: string }).deployId, minted: false };
          case 'conflict':
            throw idempotencyKeyReused({ deployId: (claim.original?.body as { deployId?: string } | undefined)?.deployId ?? null });
          case 'in_progress':
            // The claim and its completion commit together, so no other request leaves the key in
            // progress; a row in that state is a fault of another writer.
            throw new Error(`the deploy key ${key} is in progress outside a deploy`);
          case 'new':
            return { deployId: await mint(tx, p, target, body, orgId, { scope, key, claimId: claim.claimId }), minted: true };
        }
      });
      if (outcome.minted) o.job.wake();
      return answerOf(outcome.deployId);
    },

    /** The poll route: a deploy of an organization the caller reads (another's: 404). */
    async view(p: Principal, deployId: string): Promise<DeployView> {
      const row = await repo.find(deployId);
      const notFound = () => DeployErrors.TEMPLATE_DEPLOY_NOT_FOUND(`Deploy ${deployId} not found`);
      if (!row) throw notFound();
      await authorizeOrgScopes(store, p, row.org_id, { required: READ_SCOPE }).catch((e: unknown) => {
        throw e instanceof AppError && e.code === 'RESOURCE_NOT_PROJECTED' ? notFound() : e;
      });
      return {
        deployId: row.id, status: row.status, stage: row.stage,
        ...(row.status === 'succeeded' && row.result ? { result: { deployId: row.id, ...row.result } } : {}),
        ...(row.error ? { error: row.error } : {}),
      };
    },

    /** The caller's deploy session for the template and version (default: the version a deploy would install). */
    async session(p: Principal, templateId: string, version: number | undefined): Promise<{ target: DeployTarget; session: DeploySession }> {
      requireKeyScope(p, READ_SCOPE);
      const target = await sessionTarget(p, templateId, version);
      return { target, session: await repo.session(p.userId, templateId, target.version.version) };
    },

    async mergeSession(p: Principal, templateId: string, version: number | undefined, patch: { answers?: unknown; connectState?: unknown; idempotencyKey?: string | null }) {
      requireKeyScope(p, READ_SCOPE);
      const target = await sessionTarget(p, templateId, version);
      const orgId = await defaultOrg(p);
      const session = await store.unitOfWork(async (tx) => {
        const s = await createDeployRepo(tx.sql).mergeSession(p.userId, templateId, target.version.version, patch);
        if (orgId !== undefined) {
          await tx.audit({
            orgId, action: 'templates.deploy_session.updated', actor: auditActorOf(p), targetType: 'template', targetId: templateId,
            details: { version: target.version.version, fields: Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined) },
          });
        }
        return s;
      });
      return { target, session };
    },

    /**
     * The agents of the caller's organization the credential sees, each once, and whether the
     * template can be installed on it (contract templates, eligible-targets).
     */
    async eligibleTargets(p: Principal, templateId: string): Promise<EligibleTarget[]> {
      const orgId = await defaultOrg(p);
      await catalog.visibleTemplate(p, templateId);
      if (orgId === undefined) {
        requireKeyScope(p, READ_SCOPE);
        return [];
      }
      await authorizeOrgScopes(store, p, orgId, { required: READ_SCOPE });
      const [agents, role, installed, busy] = await Promise.all([
        repo.agentsOf(orgId),
        repo.roleIn(p.userId, orgId),
        o.installs.installedAgents(templateId, orgId),
        repo.agentsDeploying(orgId, templateId),
      ]);
      const member = isPerson(p) && role === 'member';
      const applying = new Set(busy.map((b) => b.agent_id));
      return agents
        .filter((a) => (p.scopes === null ? true : a.visibility === 'org' || p.agentGrants.includes(a.id)))
        .map((a): EligibleTarget => {
          const reason = installed.has(a.id) ? 'already-installed'
            : applying.has(a.id) ? 'apply-in-progress'
              : member && a.visibility === 'org' ? 'shared-agent-requires-org-admin' : undefined;
          return { agentId: a.id, name: a.name, orgId, installable: reason === undefined, ...(reason ? { reason } : {}) };
        });
    },

    /** The caller's install requests in `orgId`: none can be made through this API, so an empty list once access is granted. */
    async myInstallRequests(p: Principal, orgId: string): Promise<unknown[]> {
      await authorizeOrgScopes(store, p, orgId, { required: READ_SCOPE });
      return [];
    },
  };
}

export type DeployService = ReturnType<typeof createDeployService>;

/** The job's side of a deploy: its sealed env values opened for the install. */
export function openDeployBody(store: Pick<KernelStore, 'secretBox'>, r: DeployJobRequest): Record<string, unknown> {
  const body = { ...r.body };
  if (typeof body.envValues === 'string') body.envValues = JSON.parse(store.secretBox.open(body.envValues)) as Record<string, string>;
  return body;
}

export const isEnded = (row: Pick<DeployRow, 'status'>): boolean => isDeployTerminal(row.status);
