/**
 * The marketplace skills service (spec 03 parts 2.6, 4.5, 9.4; contract
 * skills): listing an organization's own skills on the marketplace, their
 * versions, the catalogue reads and installs on agents. No fastify here:
 * routes.ts maps requests to these calls.
 *
 * Who may act: a skill is seen when it is public or of one of the caller's
 * organizations (else 404, on every route); changing it takes
 * `automations:write` (ownership: `org:manage`) on its creator organization,
 * checked by the kernel's organization check before the unit of work (a
 * caller of another organization gets 403). Every mutation and its audit
 * entry commit in one unit of work, which re-reads the skill under a row
 * lock. Review is immediate in this deployment: a published version is
 * approved at once.
 */
import semver from 'semver';
import { newId } from '../../model/ids.js';
import { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import type { FamilyMetrics, SkillInstallAction } from '../platform-deps.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import { auditActorOf, authorizeOrgScopes, callerOrgsOf, type Principal } from '../../api/kernel/auth.js';
import { refuseIfArchived } from '../../api/kernel/archived.js';
import { principalScope, requestFingerprint, withIdempotency } from '../../api/kernel/idempotency.js';
import { insufficientScope, notProjected } from '../../api/kernel/errors.js';
import { createSkillsRepo, isSourceListed, isVersionTaken, type Install, type SearchFilters, type Skill, type SkillsRepo, type SkillVersion } from './repository.js';
import { envValueRequired, notInstalled, notPublished, SkillErrors, skillNotFound, sourceSkillNotFound, versionNotFound } from './errors.js';
import type { InstallBody, ListBody, PatchBody, PublishBody } from './schemas.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';
import { SKILLS_TOPIC } from './topic.js';

export const WRITE_SCOPE = 'automations:write';
export const READ_SCOPE = 'automations:read';
export const TRANSFER_SCOPE = 'org:manage';

export interface SkillsServiceDeps {
  store: KernelStore;
  /** Installs created, updated and removed, counted once committed (/metrics). */
  metrics: FamilyMetrics;
  /**
   * The kernel's read caches (api/kernel/read-cache.ts): the search's pages, kept between writes.
   * Without them every search reads the store.
   */
  reads?: ReadCaches;
  now?: () => Date;
}

/** Who acts on an agent's installs, as the kernel authorized it. */
export interface AgentActor {
  principal: Principal;
  orgId: string;
  agentId: string;
}

/** A skill with its versions (every one, newest first). */
export interface SkillView {
  skill: Skill;
  versions: SkillVersion[];
}

/** The version string as given, when it is a semantic version in its canonical form (`1.0.0`, `2.0.0-rc.1`). */
export function canonicalVersion(v: string): string | undefined {
  const parsed = semver.parse(v, { loose: false });
  return parsed !== null && parsed.version === v ? v : undefined;
}

/** Newest first by semantic-version precedence. */
export const newestFirst = (a: SkillVersion, b: SkillVersion): number => semver.rcompare(a.version, b.version);

/** PATCH fields and the columns they set. */
const COLUMNS: Record<keyof PatchBody, string> = {
  displayName: 'display_name', description: 'description', longDescription: 'long_description', category: 'category', tags: 'tags',
  iconUrl: 'icon_url', screenshots: 'screenshots', repositoryUrl: 'repository_url', documentationUrl: 'documentation_url',
};

export function createSkillsService(deps: SkillsServiceDeps) {
  const { store } = deps;
  const now = deps.now ?? (() => new Date());
  const repo = createSkillsRepo(store.sql);
  // Every write of the family's tables runs here; a template install's skill install runs in template-port.ts.
  const unit = <T>(fn: (tx: UnitOfWork, r: SkillsRepo) => Promise<T>): Promise<T> =>
    store.unitOfWork((tx) => {
      tx.changed(SKILLS_TOPIC);
      return fn(tx, createSkillsRepo(tx.sql));
    });
  // A search's page is kept as the route's answer in bytes: a free-text page and its count cost four
  // statements (two or three milliseconds of planning each on the embedded store) and its skills'
  // views and serialization more again.
  const pages = deps.reads?.cache<Buffer>(SKILLS_TOPIC);
  const audit = (tx: UnitOfWork, p: Principal, orgId: string, action: string, targetType: 'skill' | 'agent', targetId: string, details: Record<string, unknown>) =>
    tx.audit({ orgId, action, actor: auditActorOf(p), targetType, targetId, details });

  /** The organizations whose private skills the caller sees: a key's own; a person's memberships (a session). */
  const orgsOf = (p: Principal): Promise<string[]> => callerOrgsOf(store, p);

  const visible = async (p: Principal, id: string): Promise<{ skill: Skill; orgIds: string[] }> => {
    const orgIds = await orgsOf(p);
    const skill = await repo.visible(id, orgIds);
    if (!skill) throw skillNotFound(id);
    return { skill, orgIds };
  };

  /**
   * `scope` on the skill's creator organization; the refusal names the skill asked for (spec 01
   * part 7.1.2), not the organization it resolved to.
   */
  const authorize = async (p: Principal, skill: Skill, scope: string): Promise<void> => {
    try {
      await authorizeOrgScopes(store, p, skill.creatorOrgId ?? '', { required: scope });
    } catch (e) {
      if (e instanceof AppError && e.code === 'INSUFFICIENT_SCOPE') throw insufficientScope('marketplaceSkill', skill.id, scope);
      if (e instanceof AppError && e.code === 'RESOURCE_NOT_PROJECTED') throw notProjected('marketplaceSkill', skill.id, scope);
      throw e;
    }
    // The kernel's archived-organization rule sees only organizations in a path: a skill's is its creator's.
    await refuseIfArchived(store, skill.creatorOrgId ?? '');
  };

  /**
   * Runs a change of a skill the caller may change: seen, authorized on its creator organization,
   * then `fn` in a unit of work holding the skill's row (a skill moved to another organization
   * meanwhile is authorized again).
   */
  const change = async <T>(p: Principal, id: string, scope: string, fn: (tx: UnitOfWork, r: SkillsRepo, skill: Skill) => Promise<T>): Promise<T> => {
    const { skill, orgIds } = await visible(p, id);
    await authorize(p, skill, scope);
    return unit(async (tx, r) => {
      const locked = await r.visible(id, orgIds, true);
      if (!locked) throw skillNotFound(id);
      if (locked.creatorOrgId !== skill.creatorOrgId) throw notProjected('marketplaceSkill', id, scope);
      return fn(tx, r, locked);
    });
  };

  const withVersions = async (skills: Skill[]): Promise<SkillView[]> => {
    const versions = await repo.versionsOf(skills.map((s) => s.id));
    return skills.map((skill) => ({ skill, versions: versions.filter((v) => v.skillId === skill.id).sort(newestFirst) }));
  };
  const view = async (id: string, orgIds: readonly string[]): Promise<SkillView> => {
    const skill = await repo.visible(id, orgIds);
    if (!skill) throw skillNotFound(id);
    return (await withVersions([skill]))[0]!;
  };

  /** The version an install takes: the one named (published), else the newest published one (spec 03 part 9.4). */
  const installable = async (r: SkillsRepo, skillId: string, version: string | undefined): Promise<SkillVersion> => {
    const versions = await r.versionsOf([skillId]);
    if (version === undefined) {
      const newest = versions.filter((v) => v.published).sort(newestFirst)[0];
      if (!newest) throw notPublished(skillId, undefined);
      return newest;
    }
    const named = versions.find((v) => v.version === version);
    if (!named) throw versionNotFound(skillId, version);
    if (!named.published) throw notPublished(skillId, version);
    return named;
  };

  /** Every env variable the version marks `required` has a value among `names` (else 400 ENV_VALUE_REQUIRED, naming the first). */
  const requireEnv = (skillId: string, v: SkillVersion, names: readonly string[]): void => {
    const missing = Object.entries(v.envVarsMetadata ?? {}).filter(([name, meta]) => meta.required && !names.includes(name)).map(([name]) => name);
    if (missing.length > 0) throw envValueRequired(skillId, v.version, missing);
  };

  /** The install caller's organizations, once the skill is seen to be visible to them (else 404). */
  const visibleTo = async (a: AgentActor, id: string): Promise<string[]> => {
    const orgIds = await orgsOf(a.principal);
    if (!(await repo.visible(id, orgIds))) throw skillNotFound(id);
    return orgIds;
  };

  /** An install in one unit of work; `also` runs in it last (an idempotency key's completion). */
  const installIn = async (a: AgentActor, id: string, body: InstallBody, also?: (tx: UnitOfWork, installed: Install) => Promise<void>): Promise<Install> => {
    const orgIds = await visibleTo(a, id);
    const at = now();
    const sealed = sealEnv(body.envValues) ?? null;
    return counted('install', unit(async (tx, r) => {
      // The skill's row held: installs of one skill queue here, and its counters move once each.
      if (!(await r.visible(id, orgIds, true))) throw skillNotFound(id);
      const chosen = await installable(r, id, body.version);
      requireEnv(id, chosen, Object.keys(body.envValues ?? {}));
      const version = chosen.version;
      const install: Install = { skillId: id, agentId: a.agentId, orgId: a.orgId, version, installedAt: at };
      if (!(await r.insertInstall(install, sealed))) {
        throw SkillErrors.SKILL_ALREADY_INSTALLED(`Marketplace skill ${id} is installed on agent ${a.agentId} already; PUT updates it`, { agentId: a.agentId });
      }
      await r.countInstall(id, { installs: 1, active: 1 }, at);
      await audit(tx, a.principal, a.orgId, 'skills.install.created', 'agent', a.agentId, { skillId: id, version, envValueNames: Object.keys(body.envValues ?? {}) });
      await also?.(tx, install);
      return install;
    }));
  };

  /** An install change, counted once its unit of work has committed. */
  const counted = async <T>(action: SkillInstallAction, change: Promise<T>): Promise<T> => {
    const done = await change;
    deps.metrics.skillInstallChanged(action);
    return done;
  };

  const sealEnv = (env: Record<string, string> | undefined): string | null | undefined => (env === undefined ? undefined : store.secretBox.seal(JSON.stringify(env)));

  return {
    /** POST /marketplace/skills/list: a source skill of the caller's organization on the marketplace. */
    async list(p: Principal, body: ListBody): Promise<SkillView> {
      const orgIds = await orgsOf(p);
      const source = await repo.source(body.sourceSkillId);
      if (!source || !orgIds.includes(source.orgId)) throw sourceSkillNotFound(body.sourceSkillId);
      try {
        await authorizeOrgScopes(store, p, source.orgId, { required: WRITE_SCOPE });
      } catch (e) {
        if (e instanceof AppError && e.code === 'INSUFFICIENT_SCOPE') throw insufficientScope('skill', source.id, WRITE_SCOPE);
        throw e;
      }
      await refuseIfArchived(store, source.orgId);
      const at = now();
      const id = `mks_${newId()}`;
      try {
        await unit(async (tx, r) => {
          await r.insert({
            id, name: source.name, displayName: body.displayName, description: source.description, longDescription: body.longDescription ?? null,
            category: body.category ?? null, tags: body.tags ?? [], creatorId: p.userId, creatorOrgId: source.orgId, sourceSkillId: source.id,
            visibility: body.visibility ?? 'public', iconUrl: body.iconUrl ?? null, screenshots: body.screenshots ?? null,
            repositoryUrl: body.repositoryUrl ?? null, documentationUrl: body.documentationUrl ?? null, listedAt: at, createdAt: at,
          });
          await audit(tx, p, source.orgId, 'skills.skill.listed', 'skill', id, { sourceSkillId: source.id, name: source.name, visibility: body.visibility ?? 'public' });
        });
      } catch (e) {
        if (isSourceListed(e)) {
          const listed = await repo.listingOf(source.id);
          throw SkillErrors.SKILL_ALREADY_LISTED(`Skill ${source.id} is listed already`, { skillId: listed ?? null });
        }
        throw e;
      }
      return view(id, orgIds);
    },

    /** POST .../versions/publish: a new version, approved and published at once; lists the skill again if it was unlisted. */
    async publish(p: Principal, id: string, body: PublishBody): Promise<SkillVersion> {
      const version = canonicalVersion(body.version);
      if (version === undefined) throw SkillErrors.SKILL_VERSION_INVALID(`version must be a semantic version such as 1.0.0: ${JSON.stringify(body.version).slice(0, 80)}`);
      const at = now();
      const duplicate = () => SkillErrors.SKILL_VERSION_EXISTS(`Version ${version} of marketplace skill ${id} exists already`, { version });
      try {
        return await change(p, id, WRITE_SCOPE, async (tx, r, skill) => {
          if ((await r.versionsOf([id])).some((v) => v.version === version)) throw duplicate();
          const v: SkillVersion = {
            id: `mksv_${newId()}`, skillId: id, version, description: skill.description, changelog: body.changelog ?? null,
            envVarsMetadata: body.envVarsMetadata ?? null, approvalStatus: 'approved', published: true, approvedAt: at, createdBy: p.userId, createdAt: at,
          };
          await r.insertVersion(v);
          await r.update(id, skill.listed ? {} : { listed: true, listed_at: at.toISOString() }, at);
          await audit(tx, p, skill.creatorOrgId!, 'skills.version.published', 'skill', id, { versionId: v.id, version, envVarNames: Object.keys(body.envVarsMetadata ?? {}) });
          return v;
        });
      } catch (e) {
        if (isVersionTaken(e)) throw duplicate();
        throw e;
      }
    },

    /** PUT .../versions/:versionId/publish: that version published again; lists the skill again if it was unlisted. */
    async republish(p: Principal, id: string, versionId: string): Promise<SkillVersion> {
      const at = now();
      return change(p, id, WRITE_SCOPE, async (tx, r, skill) => {
        const v = await r.setPublished(id, { id: versionId }, true);
        if (!v) throw versionNotFound(id, versionId);
        await r.update(id, skill.listed ? {} : { listed: true, listed_at: at.toISOString() }, at);
        await audit(tx, p, skill.creatorOrgId!, 'skills.version.republished', 'skill', id, { versionId, version: v.version });
        return v;
      });
    },

    /** PUT .../unpublish: one version unpublished; the last published one also unlists the skill. */
    async unpublish(p: Principal, id: string, version: string): Promise<{ versionId: string; skillUnlisted: boolean }> {
      const at = now();
      return change(p, id, WRITE_SCOPE, async (tx, r, skill) => {
        const known = (await r.versionsOf([id])).find((v) => v.version === version);
        if (!known) throw versionNotFound(id, version);
        if (!known.published) throw notPublished(id, version);
        await r.setPublished(id, { id: known.id }, false);
        const skillUnlisted = !(await r.hasPublished(id));
        await r.update(id, skillUnlisted ? { listed: false } : {}, at);
        await audit(tx, p, skill.creatorOrgId!, 'skills.version.unpublished', 'skill', id, { versionId: known.id, version, skillUnlisted });
        return { versionId: known.id, skillUnlisted };
      });
    },

    /** PUT .../unlist: every published version unpublished, the skill off the marketplace. */
    async unlist(p: Principal, id: string): Promise<number> {
      const at = now();
      return change(p, id, WRITE_SCOPE, async (tx, r, skill) => {
        const n = await r.unpublishAll(id);
        await r.update(id, { listed: false }, at);
        await audit(tx, p, skill.creatorOrgId!, 'skills.skill.unlisted', 'skill', id, { versionsUnpublished: n });
        return n;
      });
    },

    /** PATCH: the listing's fields. */
    async patch(p: Principal, id: string, body: PatchBody): Promise<SkillView> {
      const at = now();
      const orgIds = await orgsOf(p);
      await change(p, id, WRITE_SCOPE, async (tx, r, skill) => {
        const fields = (Object.keys(COLUMNS) as (keyof PatchBody)[]).filter((k) => body[k] !== undefined);
        await r.update(id, Object.fromEntries(fields.map((k) => [COLUMNS[k], body[k]])), at);
        await audit(tx, p, skill.creatorOrgId!, 'skills.skill.updated', 'skill', id, { fields });
      });
      return view(id, orgIds);
    },

    /** PUT .../owner: the skill moves to another (existing) organization. */
    async transfer(p: Principal, id: string, newOrgId: string): Promise<SkillView> {
      const at = now();
      const orgIds = await orgsOf(p);
      await change(p, id, TRANSFER_SCOPE, async (tx, r, skill) => {
        if (!(await tx.tenancy.orgExists(newOrgId))) throw SkillErrors.SKILL_ORG_NOT_FOUND(`Organization ${newOrgId} not found`);
        await r.update(id, { creator_org_id: newOrgId }, at);
        await audit(tx, p, skill.creatorOrgId!, 'skills.skill.transferred', 'skill', id, { fromOrgId: skill.creatorOrgId, toOrgId: newOrgId });
      });
      // Public, or private and now of an organization the caller is of: it answers as it is now.
      const after = await repo.visible(id, [...orgIds, newOrgId]);
      return (await withVersions([after!]))[0]!;
    },

    /**
     * GET /marketplace/skills: a page of the visible skills and their count, as `encode` makes the
     * route's answer of them.
     */
    async search(p: Principal, f: SearchFilters, page: { page: number; limit: number }, encode: (found: { views: SkillView[]; total: number }) => Buffer): Promise<Buffer> {
      const orgIds = await orgsOf(p);
      const read = async () => {
        const { skills, total } = await repo.search(orgIds, f, { limit: page.limit, offset: (page.page - 1) * page.limit });
        return encode({ views: await withVersions(skills), total });
      };
      if (!pages) return read();
      const key = JSON.stringify([orgIds, f.listed, f.verified, f.featured, f.hasPublishedVersion, f.category, f.search, f.name, f.creatorId, page.page, page.limit]);
      return pages.get(key, read);
    },

    async get(p: Principal, id: string): Promise<SkillView> {
      return view(id, await orgsOf(p));
    },

    async versions(p: Principal, id: string, includeUnapproved: boolean): Promise<SkillVersion[]> {
      const { skill } = await visible(p, id);
      return (await repo.versionsOf([skill.id])).filter((v) => includeUnapproved || v.approvalStatus === 'approved').sort(newestFirst);
    },

    async creatorSkills(p: Principal): Promise<SkillView[]> {
      return withVersions(await repo.byCreator(p.userId, await orgsOf(p)));
    },

    async orgSkills(p: Principal, orgId: string): Promise<SkillView[]> {
      return withVersions(await repo.byOrg(orgId, await orgsOf(p)));
    },

    /** POST /marketplace/install/:id/:agentId. */
    install(a: AgentActor, id: string, body: InstallBody): Promise<Install> {
      return installIn(a, id, body);
    },

    /**
     * POST install with an Idempotency-Key (kernel/idempotency.ts): the first request installs and
     * stores its answer in the install's own commit; a retry with the key gets that answer again
     * (`replayed`), the same key on another skill, agent, version or set of env value names 409
     * IDEMPOTENCY_KEY_REUSED. The fingerprint leaves the env values out: no digest of a secret is kept.
     */
    async installOnce(a: AgentActor, id: string, body: InstallBody, key: string, answer: (i: Install) => unknown): Promise<{ status: number; body: unknown; replayed: boolean }> {
      const ref = { scope: principalScope(a.principal), route: 'skills:install', key };
      const fingerprint = requestFingerprint({ id, agentId: a.agentId, version: body.version ?? null, envValueNames: Object.keys(body.envValues ?? {}).sort() });
      return withIdempotency(store.idempotency, { ...ref, fingerprint }, async ({ claimId }) => {
        let outcome: { status: number; body: unknown } | undefined;
        await installIn(a, id, body, async (tx, installed) => {
          outcome = { status: 201, body: answer(installed) };
          await tx.idempotency.complete({ ...ref, claimId }, outcome);
        });
        return outcome!;
      }, { completedByRun: true });
    },

    /** PUT /marketplace/install/:id/:agentId: another version (published), new env values; what is not given stays. */
    async updateInstall(a: AgentActor, id: string, body: InstallBody): Promise<Install> {
      const orgIds = await visibleTo(a, id);
      const at = now();
      const sealed = sealEnv(body.envValues);
      return counted('update', unit(async (tx, r) => {
        if (!(await r.visible(id, orgIds))) throw skillNotFound(id);
        const current = await r.install(id, a.agentId);
        if (!current) throw notInstalled(id, a.agentId);
        let version = current.version;
        if (body.version !== undefined) {
          const chosen = await installable(r, id, body.version);
          // The values the install will hold: the ones sent, else the ones it has.
          const kept = body.envValues === undefined ? await r.sealedEnv(id, a.agentId) : null;
          requireEnv(id, chosen, Object.keys(body.envValues ?? (kept ? (JSON.parse(store.secretBox.open(kept)) as Record<string, string>) : {})));
          version = chosen.version;
        }
        const updated = await r.updateInstall(id, a.agentId, version, sealed, at);
        if (!updated) throw notInstalled(id, a.agentId);
        await audit(tx, a.principal, a.orgId, 'skills.install.updated', 'agent', a.agentId, {
          skillId: id, fromVersion: current.version, version, envValueNames: body.envValues === undefined ? null : Object.keys(body.envValues),
        });
        return updated;
      }));
    },

    /** DELETE /marketplace/install/:id/:agentId: the removed install. */
    async uninstall(a: AgentActor, id: string): Promise<Install> {
      const orgIds = await visibleTo(a, id);
      const at = now();
      return counted('uninstall', unit(async (tx, r) => {
        if (!(await r.visible(id, orgIds, true))) throw skillNotFound(id);
        const removed = await r.deleteInstall(id, a.agentId);
        if (!removed) throw notInstalled(id, a.agentId);
        await r.countInstall(id, { installs: 0, active: -1 }, at);
        await audit(tx, a.principal, a.orgId, 'skills.install.deleted', 'agent', a.agentId, { skillId: id, version: removed.version });
        return removed;
      }));
    },

    async installations(agentId: string): Promise<Install[]> {
      return repo.installsOf(agentId);
    },

    /** An install's env values, opened (for the skill's runtime; no route answers them). */
    async envValues(skillId: string, agentId: string): Promise<Record<string, string> | undefined> {
      const sealed = await repo.sealedEnv(skillId, agentId);
      return sealed ? (JSON.parse(store.secretBox.open(sealed)) as Record<string, string>) : undefined;
    },
  };
}

export type SkillsService = ReturnType<typeof createSkillsService>;
