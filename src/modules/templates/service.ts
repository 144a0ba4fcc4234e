/**
 * The agent templates service (spec 03 parts 2.5, 3, 4.4, 9.3; contract
 * templates): creating templates, publishing numbered versions, the draft
 * preview, the listing changes (PATCH, visibility with its review, unlist,
 * deprecate, owner transfer) and the catalog reads. No fastify here:
 * routes.ts maps requests to these calls.
 *
 * Who may act: a template is seen when it is public or of one of the
 * caller's organizations (else 404 TEMPLATE_NOT_FOUND, on every route);
 * changing it takes `automations:write` on its source agent (while that agent
 * is of the creator organization) or else on its creator organization;
 * transferring it `org:manage` on the creator organization. Every mutation
 * and its audit entry commit in one unit of work, which re-reads the template
 * under a row lock; states move only through state.ts.
 *
 * Review: private-to-public visibility and every published version go
 * through the review queue (`template_reviews`); the embedded reviewer
 * (`approveAtOnce`) decides at once, approving, in the same unit of work.
 *
 * The install and deploy routes build on the exported reads: `visibleTemplate`,
 * `readVersion`, `installableVersion`, `checkSeal`, `requireEnv`.
 */
import { newId } from '../../model/ids.js';
import { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import type { ReadCache, ReadCaches } from '../../api/kernel/read-cache.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import { auditActorOf, authorizeAgent, authorizeOrgScopes, callerOrgsOf, scopesSatisfy, type Principal } from '../../api/kernel/auth.js';
import { refuseIfArchived } from '../../api/kernel/archived.js';
import { insufficientScope, notProjected } from '../../api/kernel/errors.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import {
  AUTHORED_SECTIONS, createTemplatesRepo, type AuthoredSection, type CatalogFilters, type Review, type Template, type TemplatesRepo,
  type TemplateVersion,
} from './repository.js';
import { envValueRequired, noVersion, TemplateErrors, templateNotFound, versionNotFound } from './errors.js';
import { canonicalJson, contentHash, installSeal, type Json } from './seal.js';
import { isRefused, PUBLISHED, templateTransition, versionTransition, type TemplateEvent, type VersionState, type Visibility } from './state.js';
import type { CreateBody, DraftBody, PatchBody, PublishBody } from './schemas.js';
import type { VersionContent } from './views.js';
import { TEMPLATES_TOPIC } from './topic.js';

export const WRITE_SCOPE = 'automations:write';
export const READ_SCOPE = 'marketplace:read';
export const TRANSFER_SCOPE = 'org:manage';

/** The review queue's decision on a request (a visibility change, a version). */
export type Reviewer = (r: Pick<Review, 'kind' | 'templateId' | 'version' | 'visibility'>) => { status: 'approved' | 'rejected' | 'pending'; notes?: string };

/** The embedded default (contract templates): every request approved at once. */
export const approveAtOnce: Reviewer = () => ({ status: 'approved' });

export interface TemplatesServiceDeps {
  store: KernelStore;
  /**
   * The kernel's read caches (api/kernel/read-cache.ts): the catalog's pages and the templates and
   * versions its reads show. Without them every read goes to the store.
   */
  reads?: ReadCaches;
  reviewer?: Reviewer;
  now?: () => Date;
}

/** A body or rule failure the schema cannot state: 400 in the framework shape, naming the field. */
export const invalid = (field: string, rule: string): AppError => KernelErrors.VALIDATION_FAILED(rule, { field, message: [rule] });

/** A section sent empty (null, [] or {}) clears it (spec 03 part 4.4). */
const clears = (v: unknown): boolean =>
  v === null || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/** The value of each authored section a publish leaves: sent, inherited from `previous` when omitted, null when cleared. */
export function authoredSections(body: Partial<Record<AuthoredSection, unknown>>, previous: TemplateVersion | undefined): Record<AuthoredSection, Json | null> {
  return Object.fromEntries(AUTHORED_SECTIONS.map((s) => {
    const sent = body[s];
    if (sent === undefined) return [s, previous?.sections[s] ?? null];
    return [s, clears(sent) ? null : (sent as Json)];
  })) as Record<AuthoredSection, Json | null>;
}

/** `key` of every item is unique (declared triggers, connection requirements), else 400 naming the first repeated. */
function uniqueKeys(field: string, items: ReadonlyArray<{ key: string }> | null | undefined): void {
  const seen = new Set<string>();
  for (const [i, item] of (items ?? []).entries()) {
    if (seen.has(item.key)) throw invalid(`${field}.${i}.key`, `${field}[${i}].key ${JSON.stringify(item.key)} is given twice; keys must be unique`);
    seen.add(item.key);
  }
}

/**
 * What a draft changes against the latest version: the content fields and sections whose canonical
 * form differs (every one that has a value, when there is no version yet).
 */
function diffOf(previous: TemplateVersion | undefined, next: Pick<TemplateVersion, 'content' | 'envContract' | 'sections' | 'manifestSeal'>): { fromVersion: number | null; changed: string[]; unchanged: boolean } {
  const fields = (v: Pick<TemplateVersion, 'content' | 'envContract' | 'sections'>): Record<string, unknown> => ({
    ...Object.fromEntries(Object.entries(v.content as Record<string, unknown>).map(([k, x]) => [`content.${k}`, x])), envContract: v.envContract, ...v.sections,
  });
  const after = fields(next);
  const before = previous ? fields(previous) : {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changed = names.filter((n) => canonicalJson(before[n] ?? null) !== canonicalJson(after[n] ?? null));
  return { fromVersion: previous?.version ?? null, changed, unchanged: previous !== undefined && previous.manifestSeal === next.manifestSeal };
}

/** The agent's active version as a number, when its version text is one (`"4"`). */
const activeVersionOf = (version: string | null): number | null => (version !== null && /^[1-9]\d{0,8}$/.test(version) ? Number(version) : null);

export function createTemplatesService(deps: TemplatesServiceDeps) {
  const { store } = deps;
  const now = deps.now ?? (() => new Date());
  const reviewer = deps.reviewer ?? approveAtOnce;
  const repo = createTemplatesRepo(store.sql);
  // Every authoring write of the family's tables runs here; an install's count runs in install-service.ts.
  const unit = <T>(fn: (tx: UnitOfWork, r: TemplatesRepo) => Promise<T>): Promise<T> =>
    store.unitOfWork((tx) => {
      tx.changed(TEMPLATES_TOPIC);
      return fn(tx, createTemplatesRepo(tx.sql));
    });
  // The catalog reads (a page of the list; a template as an organization set sees it; a version),
  // kept between writes: each read route otherwise ran two or three statements. Cached objects are
  // shared by every request that reads them, and the routes only read them (views.ts makes new ones).
  const cached = <T>(read: () => Promise<T>, key: string, cache: ReadCache<T> | undefined): Promise<T> => (cache ? cache.get(key, read) : read());
  // A catalog page is kept as the route's answer in bytes: its twenty templates' views and their
  // serialization cost more than the read did.
  const pages = deps.reads?.cache<Buffer>(TEMPLATES_TOPIC);
  // So is a manifest: its views (the reconciliation, the parameters) are made from the version's sections.
  const manifests = deps.reads?.cache<Buffer>(TEMPLATES_TOPIC);
  const visibles = deps.reads?.cache<Template | undefined>(TEMPLATES_TOPIC);
  const versionsRead = deps.reads?.cache<TemplateVersion | undefined>(TEMPLATES_TOPIC);
  const keyOf = (...parts: unknown[]): string => JSON.stringify(parts);
  const visibleIn = (id: string, orgIds: readonly string[]): Promise<Template | undefined> => cached(() => repo.visible(id, orgIds), keyOf(id, orgIds), visibles);
  const versionOf = (id: string, version: number): Promise<TemplateVersion | undefined> => cached(() => repo.version(id, version), keyOf(id, version), versionsRead);
  const audit = (tx: UnitOfWork, p: Principal, orgId: string, action: string, targetId: string, details: Record<string, unknown>) =>
    tx.audit({ orgId, action, actor: auditActorOf(p), targetType: 'template', targetId, details });

  /** The organizations whose private templates the caller sees: a key's own; a person's memberships (a session). */
  const orgsOf = (p: Principal): Promise<string[]> => callerOrgsOf(store, p);

  const visibleTemplate = async (p: Principal, id: string): Promise<{ template: Template; orgIds: string[] }> => {
    const orgIds = await orgsOf(p);
    const template = await repo.visible(id, orgIds);
    if (!template) throw templateNotFound(id);
    return { template, orgIds };
  };

  /** visibleTemplate for the read routes alone, from the cache: what a write decides on is read from the store. */
  const readableTemplate = async (p: Principal, id: string): Promise<Template> => {
    const template = await visibleIn(id, await orgsOf(p));
    if (!template) throw templateNotFound(id);
    return template;
  };

  /** A version of a template the caller sees (the latest when not given), from the cache. */
  const manifestOf = async (p: Principal, id: string, version: number | undefined): Promise<{ template: Template; version: TemplateVersion }> => {
    const template = await readableTemplate(p, id);
    const number = version ?? template.latestVersion;
    if (number === 0) throw noVersion(id);
    const v = await versionOf(id, number);
    if (!v) throw versionNotFound(id, number);
    return { template, version: v };
  };

  /** A refusal of the kernel's check, named after the template asked for (spec 01 part 7.1.2), not what it resolved to. */
  const asTemplate = (e: unknown, id: string, scope: string): unknown => {
    if (e instanceof AppError && e.code === 'INSUFFICIENT_SCOPE') return insufficientScope('template', id, scope);
    if (e instanceof AppError && e.code === 'RESOURCE_NOT_PROJECTED') return notProjected('template', id, scope);
    return e;
  };

  /**
   * `scope` on what the template is bound to (contract templates, scopes): its source agent while
   * that agent is of the creator organization (not for `org:manage`), else the creator organization.
   */
  const authorize = async (p: Principal, t: Template, scope: string): Promise<void> => {
    try {
      const agent = scope === WRITE_SCOPE && t.sourceAgentId !== null ? await repo.agent(t.sourceAgentId) : undefined;
      if (agent && agent.orgId === t.creatorOrgId) await authorizeAgent(store, p, agent.id, { required: scope });
      else await authorizeOrgScopes(store, p, t.creatorOrgId, { required: scope });
    } catch (e) {
      throw asTemplate(e, t.id, scope);
    }
    // The kernel's archived-organization rule sees only organizations in a path: a template's is its creator's.
    await refuseIfArchived(store, t.creatorOrgId);
  };

  /**
   * Runs a change of a template the caller may change: seen, authorized, then `fn` in a unit of work
   * holding the template's row (one moved to another organization meanwhile is refused).
   */
  const change = async <T>(p: Principal, id: string, scope: string, fn: (tx: UnitOfWork, r: TemplatesRepo, t: Template) => Promise<T>): Promise<T> => {
    const { template, orgIds } = await visibleTemplate(p, id);
    await authorize(p, template, scope);
    return unit(async (tx, r) => {
      const locked = await r.visible(id, orgIds, true);
      if (!locked) throw templateNotFound(id);
      if (locked.creatorOrgId !== template.creatorOrgId) throw notProjected('template', id, scope);
      return fn(tx, r, locked);
    });
  };

  const moveTemplate = (t: Template, e: TemplateEvent) => {
    const next = templateTransition({ visibility: t.visibility, listed: t.listed, pendingVisibility: t.pendingVisibility }, e);
    // A move the service never asks for: a programming error, not an answer.
    if (isRefused(next)) throw new Error(`template ${t.id}: ${next.refused}`);
    return next;
  };
  const moveVersion = (s: VersionState, e: Parameters<typeof versionTransition>[1]): VersionState => {
    const next = versionTransition(s, e);
    if (isRefused(next)) throw new Error(next.refused);
    return next;
  };

  /**
   * What a version of `t` freezes now: the source agent's snapshot (or, without one, the previous
   * version's), checked against `sourceAgentVersion` (only the agent's active version is kept).
   */
  const snapshot = async (r: TemplatesRepo, t: Template, previous: TemplateVersion | undefined, asked: number | undefined): Promise<{ agent: VersionContent['agent']; sourceAgentVersion: number | null }> => {
    const agent = t.sourceAgentId === null ? undefined : await r.agent(t.sourceAgentId);
    const active = agent ? activeVersionOf(agent.version) : null;
    if (asked !== undefined && asked !== active) {
      throw TemplateErrors.SOURCE_AGENT_VERSION_NOT_FOUND(
        t.sourceAgentId === null
          ? `Template ${t.id} has no source agent; sourceAgentVersion cannot be given`
          : `Version ${asked} of agent ${t.sourceAgentId} is not its active version${active === null ? '' : ` (${active})`}`,
        { sourceAgentId: t.sourceAgentId, version: asked },
      );
    }
    if (agent) return { agent: { name: agent.name }, sourceAgentVersion: active };
    const kept = previous ? (previous.content as unknown as VersionContent).agent : undefined;
    return { agent: kept ?? {}, sourceAgentVersion: null };
  };

  /** The version a publish (or a draft) of `t` builds from `body`, before it is numbered and reviewed. */
  const compose = async (r: TemplatesRepo, t: Template, body: PublishBody): Promise<Omit<TemplateVersion, 'id' | 'version' | 'approvalStatus' | 'approvalNotes' | 'approvedBy' | 'approvedAt' | 'createdBy' | 'createdAt'>> => {
    uniqueKeys('declaredTriggers', body.declaredTriggers);
    uniqueKeys('connections', body.connections);
    const previous = t.latestVersion > 0 ? await r.version(t.id, t.latestVersion) : undefined;
    const { agent, sourceAgentVersion } = await snapshot(r, t, previous, body.sourceAgentVersion);
    const content: VersionContent = {
      agent, declaredTriggers: (body.declaredTriggers ?? []) as VersionContent['declaredTriggers'], marketplaceSkills: body.marketplaceSkills ?? [],
      outcomes: (body.outcomes ?? null) as Json | null, channels: (body.channels ?? null) as Json | null, features: (body.features ?? null) as Json | null,
    };
    const sections = authoredSections(body, previous);
    const envContract = body.envContract ?? null;
    const asJson = content as unknown as Json;
    return {
      templateId: t.id, content: asJson, envContract, changelog: body.changelog ?? null, sourceAgentVersion, sections,
      contentHash: contentHash(asJson), manifestSeal: installSeal({ content: asJson, envContract: envContract as Json | null, ...sections }),
      deprecated: false, deprecatedReason: null, deprecatedBy: null, deprecatedAt: null, warnings: null, referenceEvalRunId: body.referenceEvalRunId ?? null,
    };
  };

  /** Records a review request and the reviewer's decision on it (pending stays queued). */
  const review = async (r: TemplatesRepo, p: Principal, req: Pick<Review, 'kind' | 'templateId' | 'version' | 'visibility'>, at: Date) => {
    const decision = reviewer(req);
    const decided = decision.status !== 'pending';
    await r.insertReview({
      id: `tplr_${newId()}`, ...req, status: decision.status, requestedBy: p.userId, requestedAt: at,
      decidedBy: decided ? 'reviewer' : null, decidedAt: decided ? at : null, notes: decision.notes ?? null,
    });
    return decision;
  };

  return {
    orgsOf,

    /** The template when the caller may see it; else 404 TEMPLATE_NOT_FOUND. */
    async visibleTemplate(p: Principal, id: string): Promise<Template> {
      return (await visibleTemplate(p, id)).template;
    },

    /** One version of a template (no visibility check: call after visibleTemplate), or 404. */
    async readVersion(templateId: string, version: number, sql?: UnitOfWork['sql']): Promise<TemplateVersion> {
      const v = await (sql ? createTemplatesRepo(sql) : repo).version(templateId, version);
      if (!v) throw versionNotFound(templateId, version);
      return v;
    },

    /**
     * The version a new install or deploy takes (spec 03 part 9.3): the one asked for, else the
     * latest (`latest`) or the latest approved, else the latest (`latestApproved`, deploy). A
     * deprecated one is refused (409 TEMPLATE_VERSION_DEPRECATED).
     */
    async installableVersion(t: Template, asked: number | undefined, fallback: 'latest' | 'latestApproved', sql?: UnitOfWork['sql']): Promise<TemplateVersion> {
      const number = asked ?? (fallback === 'latestApproved' ? t.latestApprovedVersion ?? t.latestVersion : t.latestVersion);
      if (number === 0) throw noVersion(t.id);
      const v = await (sql ? createTemplatesRepo(sql) : repo).version(t.id, number);
      if (!v) throw versionNotFound(t.id, number);
      if (v.deprecated) {
        throw TemplateErrors.TEMPLATE_VERSION_DEPRECATED(`Version ${v.version} of template ${t.id} is deprecated`, { reason: v.deprecatedReason ?? undefined });
      }
      return v;
    },

    /** A sent seal matches the version's install seal (omitted: not checked), else 409 CONTENT_HASH_MISMATCH. */
    checkSeal(v: TemplateVersion, sent: string | undefined): void {
      if (sent !== undefined && sent !== v.manifestSeal) {
        throw TemplateErrors.CONTENT_HASH_MISMATCH(`The template changed since its manifest was read: contentHash is not the seal of version ${v.version}`, { reason: 'seal-mismatch' });
      }
    },

    /** Every `required` variable of the version's envContract has a value in `envValues`, else 400 ENV_VALUE_REQUIRED naming the first. */
    requireEnv(v: TemplateVersion, envValues: Record<string, unknown> | undefined): void {
      for (const [key, meta] of Object.entries(v.envContract ?? {})) {
        const value = envValues?.[key];
        if (meta.required && (value === undefined || value === null || value === '')) throw envValueRequired(key);
      }
    },

    /** POST /marketplace/templates: from a source agent (its organization) or declaratively (`creatorOrgId`). */
    async create(p: Principal, body: CreateBody): Promise<Template> {
      if ((body.sourceAgentId === undefined) === (body.creatorOrgId === undefined)) {
        throw invalid('sourceAgentId', 'exactly one of sourceAgentId and creatorOrgId must be given');
      }
      let orgId: string;
      let source: { id: string; base: boolean } | undefined;
      if (body.sourceAgentId !== undefined) {
        orgId = (await authorizeAgent(store, p, body.sourceAgentId, { required: WRITE_SCOPE })).orgId;
        const agent = await repo.agent(body.sourceAgentId);
        if (!agent) throw notProjected('agent', body.sourceAgentId, WRITE_SCOPE);
        source = { id: agent.id, base: agent.baseAgent };
      } else {
        orgId = body.creatorOrgId!;
        await authorizeOrgScopes(store, p, orgId, { required: WRITE_SCOPE });
      }
      await refuseIfArchived(store, orgId);
      const at = now();
      const t: Template = {
        id: `tpl_${newId()}`, name: body.name, displayName: body.displayName, description: body.description ?? '', creatorId: p.userId,
        creatorOrgId: orgId, sourceAgentId: source?.id ?? null, sourceBaseAgentId: source?.base ? source.id : null,
        visibility: body.visibility ?? 'private', pendingVisibility: null, listed: true, firstParty: false, latestVersion: 0,
        latestApprovedVersion: null, installCount: 0, activeInstallCount: 0, createdAt: at, updatedAt: at,
      };
      await unit(async (tx, r) => {
        await r.insert(t);
        await audit(tx, p, orgId, 'templates.template.created', t.id, {
          name: t.name, visibility: t.visibility, sourceAgentId: t.sourceAgentId, sourceBaseAgentId: t.sourceBaseAgentId,
        });
      });
      return t;
    },

    /**
     * POST .../versions: the next number, its sections inherited or cleared, reviewed (approved at
     * once by default). `after` runs on the same unit of work once the version is written (the
     * install service fans it out to consenting installs there); what it throws undoes the publish.
     */
    async publish(p: Principal, id: string, body: PublishBody, after?: (tx: UnitOfWork, t: Template, v: TemplateVersion) => Promise<void>): Promise<TemplateVersion> {
      const at = now();
      // The template's row lock orders publishes of one template, so each takes the next number.
      return change(p, id, WRITE_SCOPE, async (tx, r, t) => {
          const composed = await compose(r, t, body);
          const version = t.latestVersion + 1;
          const decision = await review(r, p, { kind: 'version', templateId: id, version, visibility: null }, at);
          const state = decision.status === 'pending' ? PUBLISHED : moveVersion(PUBLISHED, { type: decision.status });
          const v: TemplateVersion = {
            ...composed, id: `tplv_${newId()}`, version, approvalStatus: state.approvalStatus, approvalNotes: decision.notes ?? null,
            approvedBy: state.approvalStatus === 'approved' ? 'reviewer' : null, approvedAt: state.approvalStatus === 'approved' ? at : null,
            createdBy: p.userId, createdAt: at,
          };
          await r.insertVersion(v);
          const listing = moveTemplate(t, { type: 'version_published' });
          await r.update(id, { latestVersion: version, listed: listing.listed, ...(v.approvalStatus === 'approved' ? { latestApprovedVersion: version } : {}) }, at);
          await audit(tx, p, t.creatorOrgId, 'templates.version.published', id, {
            version, approvalStatus: v.approvalStatus, contentHash: v.manifestSeal,
            sections: AUTHORED_SECTIONS.filter((s) => body[s] !== undefined),
          });
          if (after) await after(tx, t, v);
          return v;
      });
    },

    /**
     * POST /templates/:templateId/versions/draft: what a publish would freeze now (the source agent's
     * snapshot, the latest version's sections inherited) and how it differs from the latest
     * version. Checks as a publish does; persists nothing.
     */
    async draft(p: Principal, id: string, body: DraftBody): Promise<{ templateId: string; draft: Record<string, unknown>; diff: Record<string, unknown>; warnings?: string[] }> {
      const { template } = await visibleTemplate(p, id);
      await authorize(p, template, WRITE_SCOPE);
      const previous = template.latestVersion > 0 ? await repo.version(id, template.latestVersion) : undefined;
      const prevContent = previous ? (previous.content as unknown as VersionContent) : undefined;
      // Unsectioned fields are carried over from the latest version, as the author last published them.
      const composed = await compose(repo, template, {
        sourceAgentVersion: body.sourceAgentVersion, envContract: previous?.envContract ?? undefined,
        declaredTriggers: prevContent?.declaredTriggers, marketplaceSkills: prevContent?.marketplaceSkills,
        outcomes: prevContent?.outcomes ?? undefined, channels: prevContent?.channels ?? undefined, features: prevContent?.features ?? undefined,
      });
      const draft = {
        version: template.latestVersion + 1, content: composed.content, envContract: composed.envContract ?? undefined,
        sourceAgentVersion: composed.sourceAgentVersion ?? undefined, ...Object.fromEntries(Object.entries(composed.sections).filter(([, v]) => v !== null)),
        contentHash: composed.contentHash, manifestContentHash: composed.manifestSeal,
      };
      return { templateId: id, draft, diff: diffOf(previous, composed) };
    },

    /** PATCH: display name and description. */
    async patch(p: Principal, id: string, body: PatchBody): Promise<Template> {
      const at = now();
      return change(p, id, WRITE_SCOPE, async (tx, r, t) => {
        const updated = await r.update(id, { displayName: body.displayName, description: body.description }, at);
        await audit(tx, p, t.creatorOrgId, 'templates.template.updated', id, { fields: Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined) });
        return updated;
      });
    },

    /** PUT .../visibility: private at once; private to public through the review queue (approved at once by default). */
    async setVisibility(p: Principal, id: string, to: Visibility): Promise<Template> {
      const at = now();
      return change(p, id, WRITE_SCOPE, async (tx, r, t) => {
        let next = moveTemplate(t, { type: 'visibility_requested', to });
        let reviewStatus: string | null = null;
        if (next.pendingVisibility !== null) {
          const decision = await review(r, p, { kind: 'visibility', templateId: id, version: null, visibility: next.pendingVisibility }, at);
          reviewStatus = decision.status;
          if (decision.status !== 'pending') {
            const decided = templateTransition(next, { type: decision.status === 'approved' ? 'review_approved' : 'review_rejected' });
            if (isRefused(decided)) throw new Error(decided.refused);
            next = decided;
          }
        }
        const updated = await r.update(id, { visibility: next.visibility, pendingVisibility: next.pendingVisibility }, at);
        await audit(tx, p, t.creatorOrgId, 'templates.visibility.changed', id, { from: t.visibility, requested: to, to: next.visibility, review: reviewStatus });
        return updated;
      });
    },

    /** PUT .../unlist: off other organizations' catalog lists (still readable by id when public). */
    async unlist(p: Principal, id: string): Promise<Template> {
      const at = now();
      return change(p, id, WRITE_SCOPE, async (tx, r, t) => {
        const next = moveTemplate(t, { type: 'unlisted' });
        const updated = await r.update(id, { listed: next.listed }, at);
        await audit(tx, p, t.creatorOrgId, 'templates.template.unlisted', id, { wasListed: t.listed });
        return updated;
      });
    },

    /** PUT /templates/:templateId/versions/:version/deprecate: blocks new installs of that version only. */
    async deprecate(p: Principal, id: string, version: number, reason: string | undefined): Promise<TemplateVersion> {
      const at = now();
      return change(p, id, WRITE_SCOPE, async (tx, r, t) => {
        const v = await r.version(id, version);
        if (!v) throw versionNotFound(id, version);
        // Deprecated already: nothing changes, the first reason stands (state.ts).
        if (v.deprecated) return v;
        const next = moveVersion(v, { type: 'deprecated', reason: reason ?? null });
        const updated = await r.updateVersion(id, version, { deprecated: true, deprecatedReason: next.deprecatedReason, deprecatedBy: p.userId, deprecatedAt: at });
        await r.update(id, {}, at);
        await audit(tx, p, t.creatorOrgId, 'templates.version.deprecated', id, { version, reason: reason ?? null });
        return updated!;
      });
    },

    /** PUT /templates/:templateId/owner: to another organization (`org:manage` on the current one). */
    async transfer(p: Principal, id: string, newOrgId: string): Promise<Template> {
      const at = now();
      return change(p, id, TRANSFER_SCOPE, async (tx, r, t) => {
        if (!(await tx.tenancy.orgExists(newOrgId))) throw TemplateErrors.TEMPLATE_ORG_NOT_FOUND(`Organization ${newOrgId} not found`);
        const updated = await r.update(id, { creatorOrgId: newOrgId }, at);
        await audit(tx, p, t.creatorOrgId, 'templates.template.transferred', id, { fromOrgId: t.creatorOrgId, toOrgId: newOrgId });
        return updated;
      });
    },

    /**
     * GET /marketplace/templates: public listed templates and the caller's organizations' own, newest
     * first, as `encode` makes the route's answer of a page and its count.
     */
    async catalog(p: Principal, f: CatalogFilters, page: { page: number; limit: number }, encode: (found: { templates: Template[]; total: number }) => Buffer): Promise<Buffer> {
      const orgIds = await orgsOf(p);
      const offset = (page.page - 1) * page.limit;
      const read = async () => encode(await repo.catalog(orgIds, f, { limit: page.limit, offset }));
      return cached(read, keyOf(orgIds, f.firstParty ?? null, page.limit, offset), pages);
    },

    async get(p: Principal, id: string): Promise<Template> {
      return readableTemplate(p, id);
    },

    /** A page of a visible template's versions, newest first. */
    async versions(p: Principal, id: string, page: { page: number; limit: number }): Promise<{ versions: TemplateVersion[]; total: number }> {
      await visibleTemplate(p, id);
      return repo.versions(id, { limit: page.limit, offset: (page.page - 1) * page.limit });
    },

    async version(p: Principal, id: string, version: number): Promise<TemplateVersion> {
      await visibleTemplate(p, id);
      const v = await repo.version(id, version);
      if (!v) throw versionNotFound(id, version);
      return v;
    },

    /**
     * GET .../review: the template's review state, every version newest first. `marketplace:read`
     * held by the credential (a person holds it in its organizations; contract templates, scopes).
     */
    async review(p: Principal, id: string): Promise<{ template: Template; versions: TemplateVersion[] }> {
      const { template } = await visibleTemplate(p, id);
      if (p.scopes !== null && !scopesSatisfy(p.scopes, READ_SCOPE)) throw insufficientScope('template', id, READ_SCOPE);
      const { versions } = await repo.versions(id, { limit: Math.max(1, template.latestVersion), offset: 0 });
      return { template, versions };
    },

    /** The template and the version its manifest shows: the one named, else the latest. */
    manifest: manifestOf,

    /** The manifest of `version` (the latest when not given), as `encode` makes the route's answer of it. */
    async manifestAnswer(p: Principal, id: string, version: number | undefined, encode: (template: Template, version: TemplateVersion) => Buffer): Promise<Buffer> {
      const orgIds = await orgsOf(p);
      const read = async () => {
        const found = await manifestOf(p, id, version);
        return encode(found.template, found.version);
      };
      return cached(read, keyOf(orgIds, id, version ?? null), manifests);
    },
  };
}

export type TemplatesService = ReturnType<typeof createTemplatesService>;
