/**
 * The marketplace skill routes (spec 03 part 4.5; contract skills). Each
 * declares its access: the catalogue and the skill routes take any valid
 * credential (the service filters by visibility and checks the scope on the
 * skill's creator organization), the install routes the agent in the path
 * with `automations:write`, the installations read `automations:read`.
 * Errors answer in the framework shape.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantedOf, type Access } from '../../api/kernel/access.js';
import { NO_BODY } from '../../api/kernel/schema.js';
import { answerBytes } from '../../api/kernel/read-cache.js';
import { keyedByHeader } from '../../api/kernel/store-outage.js';
import type { Install, SkillVersion } from './repository.js';
import { READ_SCOPE, WRITE_SCOPE, type AgentActor, type SkillsService, type SkillView } from './service.js';
import {
  AgentParams, Answers, InstallBody, InstallHeaders, InstallParams, ListBody, OrgParams, OwnerBody, PatchBody, PublishBody, SearchQuery, SkillParams,
  UnpublishBody, VersionParams, VersionsQuery, type InstalledOut, type SkillOut, type VersionOut,
} from './schemas.js';

export const SKILLS_BASE = '/marketplace/skills';

const anyCredential = { access: { resource: 'authenticated' } as Access, errorShape: 'framework' as const };
const onAgent = (required: string) => ({ access: { resource: 'agent', scope: { required } } as Access, errorShape: 'framework' as const });

const iso = (d: Date): string => d.toISOString();
/** Only the fields that have a value: the spec's optional fields are left out rather than null. */
const present = <T extends Record<string, unknown>>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as T;

export const versionOut = (v: SkillVersion): VersionOut => present({
  id: v.id, marketplaceSkillId: v.skillId, version: v.version, description: v.description, changelog: v.changelog ?? undefined,
  envVarsMetadata: v.envVarsMetadata ?? undefined, approvalStatus: v.approvalStatus, published: v.published,
  approvedAt: v.approvedAt ? iso(v.approvedAt) : undefined, createdBy: v.createdBy, createdAt: iso(v.createdAt),
});

export const skillOut = ({ skill: s, versions }: SkillView): SkillOut => present({
  id: s.id, name: s.name, displayName: s.displayName, description: s.description, longDescription: s.longDescription ?? undefined,
  category: s.category ?? undefined, tags: s.tags, creatorId: s.creatorId, creatorOrgId: s.creatorOrgId ?? undefined,
  ownershipStatus: s.ownershipStatus, sourceSkillId: s.sourceSkillId, listed: s.listed, visibility: s.visibility, verified: s.verified,
  featured: s.featured, published: s.published, installCount: s.installCount, activeInstallCount: s.activeInstallCount,
  iconUrl: s.iconUrl ?? undefined, screenshots: s.screenshots ?? undefined, repositoryUrl: s.repositoryUrl ?? undefined,
  documentationUrl: s.documentationUrl ?? undefined, listedAt: s.listedAt ? iso(s.listedAt) : undefined,
  createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt),
  versions: versions.filter((v) => v.approvalStatus === 'approved').map(versionOut),
  versionsCount: versions.length,
  pendingVersionsCount: versions.filter((v) => v.approvalStatus === 'pending').length,
  approvedVersionsCount: versions.filter((v) => v.approvalStatus === 'approved').length,
});

const installedOut = (i: Install): InstalledOut => ({ marketplaceSkillId: i.skillId, agentId: i.agentId, version: i.version, installedAt: iso(i.installedAt) });

const flag = (v: 'true' | 'false' | undefined): boolean | undefined => (v === undefined ? undefined : v === 'true');

const agentActor = (req: FastifyRequest): AgentActor => {
  const g = grantedOf(req);
  return { principal: g.principal, orgId: g.orgId!, agentId: g.agentId! };
};

/** The OpenAPI document's group for these routes. */
const tags = ['skills'];

export function registerSkillRoutes(app: FastifyInstance, service: SkillsService): void {
  const principal = (req: FastifyRequest) => grantedOf(req).principal;

  app.post<{ Body: ListBody }>(`${SKILLS_BASE}/list`, {
    schema: { tags, summary: 'List a source skill of the caller\'s organization on the marketplace', body: ListBody, response: { 201: Answers.skill } },
    config: anyCredential,
  }, async (req, reply) => reply.status(201).send(skillOut(await service.list(principal(req), req.body))));

  app.post<{ Params: SkillParams; Body: PublishBody }>(`${SKILLS_BASE}/:id/versions/publish`, {
    schema: { tags, summary: 'Publish a version (a semantic version, once each)', params: SkillParams, body: PublishBody, response: { 201: Answers.version } },
    config: anyCredential,
  }, async (req, reply) => reply.status(201).send(versionOut(await service.publish(principal(req), req.params.id, req.body))));

  app.put<{ Params: VersionParams }>(`${SKILLS_BASE}/:id/versions/:versionId/publish`, {
    schema: { tags, summary: 'Publish an unpublished version again', params: VersionParams, response: { 200: Answers.version } },
    config: { ...anyCredential, bodyUnchecked: NO_BODY },
  }, async (req) => versionOut(await service.republish(principal(req), req.params.id, req.params.versionId)));

  app.put<{ Params: SkillParams; Body: UnpublishBody }>(`${SKILLS_BASE}/:id/unpublish`, {
    schema: { tags, summary: 'Unpublish a version (the last published one also unlists the skill)', params: SkillParams, body: UnpublishBody, response: { 200: Answers.unpublished } },
    config: anyCredential,
  }, async (req) => {
    const r = await service.unpublish(principal(req), req.params.id, req.body.version);
    const message = r.skillUnlisted
      ? `Version ${req.body.version} unpublished; it was the last published version, so the skill is no longer listed`
      : `Version ${req.body.version} unpublished`;
    return { success: true, message, skillUnlisted: r.skillUnlisted, versionId: r.versionId };
  });

  app.put<{ Params: SkillParams }>(`${SKILLS_BASE}/:id/unlist`, {
    schema: { tags, summary: 'Unlist the skill: every published version is unpublished', params: SkillParams, response: { 200: Answers.unlisted } },
    config: { ...anyCredential, bodyUnchecked: NO_BODY },
  }, async (req) => {
    const n = await service.unlist(principal(req), req.params.id);
    return { success: true, message: `Skill unlisted; ${n} published version${n === 1 ? '' : 's'} unpublished`, unlisted: true, versionsUnpublished: n };
  });

  app.patch<{ Params: SkillParams; Body: PatchBody }>(`${SKILLS_BASE}/:id`, {
    schema: { tags, summary: 'Change the skill\'s listing fields', params: SkillParams, body: PatchBody, response: { 200: Answers.skill } },
    config: anyCredential,
  }, async (req) => skillOut(await service.patch(principal(req), req.params.id, req.body)));

  app.put<{ Params: SkillParams; Body: OwnerBody }>(`${SKILLS_BASE}/:id/owner`, {
    schema: { tags, summary: 'Transfer the skill to another organization (org:manage)', params: SkillParams, body: OwnerBody, response: { 200: Answers.skill } },
    config: anyCredential,
  }, async (req) => skillOut(await service.transfer(principal(req), req.params.id, req.body.newOrgId)));

  app.get<{ Querystring: SearchQuery }>(SKILLS_BASE, {
    schema: { tags, summary: 'Search the visible skills: filters, free text, 1-based pages', querystring: SearchQuery, response: { 200: Answers.search } },
    config: anyCredential,
  }, async (req, reply) => {
    const q = req.query;
    const page = Number(q.page ?? '1');
    const limit = Number(q.limit ?? '10');
    // The answer's bytes come from this route's own serializer (its response schema), made once per read of the store.
    const body = await service.search(principal(req), {
      listed: flag(q.listed), verified: flag(q.verified), featured: flag(q.featured), hasPublishedVersion: flag(q.hasPublishedVersion),
      category: q.category, search: q.search, name: q.name, creatorId: q.creatorId,
    }, { page, limit }, ({ views, total }) => {
      const totalPages = Math.ceil(total / limit);
      return answerBytes(reply.serialize({
        data: views.map(skillOut),
        pagination: {
          page, limit, total, totalPages,
          currentPage: page, totalCount: total, hasNextPage: page < totalPages, hasPrevPage: page > 1,
          nextPage: page < totalPages ? page + 1 : null, prevPage: page > 1 ? page - 1 : null, totalCountExact: true,
        },
      }));
    });
    return reply.type('application/json; charset=utf-8').send(body);
  });

  app.get<{ Params: SkillParams }>(`${SKILLS_BASE}/:id`, {
    schema: { tags, summary: 'One visible skill with its versions', params: SkillParams, response: { 200: Answers.skill } },
    config: anyCredential,
  }, async (req) => skillOut(await service.get(principal(req), req.params.id)));

  app.get<{ Params: SkillParams; Querystring: VersionsQuery }>(`${SKILLS_BASE}/:id/versions`, {
    schema: { tags, summary: 'A skill\'s versions, newest first (includeUnapproved)', params: SkillParams, querystring: VersionsQuery, response: { 200: Answers.versions } },
    config: anyCredential,
  }, async (req) => (await service.versions(principal(req), req.params.id, req.query.includeUnapproved === 'true')).map(versionOut));

  app.get('/marketplace/creator/skills', {
    schema: { tags, summary: 'The skills the caller created', response: { 200: Answers.skills } },
    config: anyCredential,
  }, async (req) => (await service.creatorSkills(principal(req))).map(skillOut));

  app.get<{ Params: OrgParams }>('/marketplace/orgs/:orgId/skills', {
    schema: { tags, summary: 'An organization\'s skills the caller may see', params: OrgParams, response: { 200: Answers.skills } },
    config: anyCredential,
  }, async (req) => (await service.orgSkills(principal(req), req.params.orgId)).map(skillOut));

  app.post<{ Params: InstallParams; Body: InstallBody; Headers: InstallHeaders }>('/marketplace/install/:id/:agentId', {
    schema: { tags, summary: 'Install a published version on an agent (env values sealed, never returned)', params: InstallParams, headers: InstallHeaders, body: InstallBody, response: { 201: Answers.installed } },
    // An install with an Idempotency-Key may be retried blindly after a store outage; one without may not.
    config: { ...onAgent(WRITE_SCOPE), blindRetry: keyedByHeader('idempotency-key') },
  }, async (req, reply) => {
    const key = req.headers['idempotency-key'];
    if (key === undefined) return reply.status(201).send(installedOut(await service.install(agentActor(req), req.params.id, req.body)));
    const r = await service.installOnce(agentActor(req), req.params.id, req.body, key, (i) => installedOut(i));
    if (r.replayed) reply.header('Idempotent-Replayed', 'true');
    return reply.status(r.status).send(r.body);
  });

  app.put<{ Params: InstallParams; Body: InstallBody }>('/marketplace/install/:id/:agentId', {
    schema: { tags, summary: 'Change an installed skill\'s version or env values', params: InstallParams, body: InstallBody, response: { 200: Answers.installed } },
    config: onAgent(WRITE_SCOPE),
  }, async (req) => installedOut(await service.updateInstall(agentActor(req), req.params.id, req.body)));

  app.delete<{ Params: InstallParams }>('/marketplace/install/:id/:agentId', {
    schema: { tags, summary: 'Uninstall a skill from an agent', params: InstallParams, response: { 200: Answers.installed } },
    config: onAgent(WRITE_SCOPE),
  }, async (req) => installedOut(await service.uninstall(agentActor(req), req.params.id)));

  app.get<{ Params: AgentParams }>('/marketplace/installations/:agentId', {
    schema: { tags, summary: 'The skills installed on an agent', params: AgentParams, response: { 200: Answers.installations } },
    config: onAgent(READ_SCOPE),
  }, async (req) => (await service.installations(grantedOf(req).agentId!)).map(installedOut));
}
