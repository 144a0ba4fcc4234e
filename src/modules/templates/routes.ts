/**
 * The agent template routes of the catalog and its authoring (spec 03 part
 * 4.4; contract templates). Each declares its access: every route here takes
 * any valid credential, and the service filters by visibility and checks the
 * scope on what the template is bound to (its source agent or creator
 * organization). The catalog reads count in per-address buckets (spec 03
 * part 8). Errors answer in the templates envelope.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantedOf, type Access, type Limit } from '../../api/kernel/access.js';
import { NO_BODY } from '../../api/kernel/schema.js';
import type { Bucket } from '../../api/kernel/rate-limit.js';
import type { TemplatesService } from './service.js';
import type { TemplateVersion } from './repository.js';
import type { Principal } from '../../api/kernel/auth.js';
import { TemplateErrors } from './errors.js';
import { manifestOut, reviewOut, templateOut, versionOut } from './views.js';
import { answerBytes } from '../../api/kernel/read-cache.js';
import {
  Answers, CatalogQuery, CreateBody, DeprecateBody, DraftBody, ManifestQuery, OwnerBody, PatchBody, PublishBody, TEMPLATE_LIMITS, TemplateParams,
  VersionParams, VersionsQuery, VisibilityBody,
} from './schemas.js';

export const TEMPLATES_BASE = '/marketplace/templates';

/** Spec 03 part 8: the catalog list, 60 a minute per client address; detail and manifest reads, 20. */
export const CATALOG_BUCKETS: { list: Bucket; read: Bucket } = {
  list: { name: 'templates-catalog-list', limit: 60, windowMs: 60_000, error: TemplateErrors.TEMPLATE_CATALOG_RATE_LIMITED, style: 'plain' },
  read: { name: 'templates-catalog-read', limit: 20, windowMs: 60_000, error: TemplateErrors.TEMPLATE_CATALOG_RATE_LIMITED, style: 'plain' },
};

const perAddress = (bucket: Bucket): Limit => ({ per: 'address', bucket: () => bucket });
const anyCredential = { access: { resource: 'authenticated' } as Access, errorShape: 'templates' as const };
const catalog = (bucket: Bucket) => ({ access: { resource: 'authenticated', limit: perAddress(bucket) } as Access, errorShape: 'templates' as const });

/** The OpenAPI document's group for these routes. */
const tags = ['templates'];

/** Publishing a version, with the creator-update fan-out it leads to (install-service.ts `publish`). */
export type PublishVersion = (p: Principal, templateId: string, body: PublishBody) => Promise<{ version: TemplateVersion; autoApply?: { runId: string; targetCount: number } }>;

export function registerTemplateRoutes(app: FastifyInstance, service: TemplatesService, publish: PublishVersion): void {
  const principal = (req: FastifyRequest) => grantedOf(req).principal;
  const T = `${TEMPLATES_BASE}/:templateId`;

  app.post<{ Body: CreateBody }>(TEMPLATES_BASE, {
    schema: { tags, summary: 'Create a template from a source agent or declaratively (creatorOrgId)', body: CreateBody, response: { 201: Answers.template } },
    config: anyCredential,
  }, async (req, reply) => reply.status(201).send(templateOut(await service.create(principal(req), req.body))));

  app.post<{ Params: TemplateParams; Body: PublishBody }>(`${T}/versions`, {
    schema: { tags, summary: 'Publish the next version (omitted authored sections inherit; null, [] or {} clear)', params: TemplateParams, body: PublishBody, response: { 201: Answers.version } },
    config: anyCredential,
  }, async (req, reply) => {
    const { version, autoApply } = await publish(principal(req), req.params.templateId, req.body);
    // Present only when a fan-out to consenting installs happened (spec 03 part 4.4).
    return reply.status(201).send({ ...versionOut(version), ...(autoApply ? { autoApplyRunId: autoApply.runId, autoApplyTargetCount: autoApply.targetCount } : {}) });
  });

  app.post<{ Params: TemplateParams; Body: DraftBody }>('/templates/:templateId/versions/draft', {
    schema: { tags, summary: 'Preview the next version and its difference from the latest; persists nothing', params: TemplateParams, body: DraftBody, response: { 201: Answers.draft } },
    config: anyCredential,
  }, async (req, reply) => reply.status(201).send(await service.draft(principal(req), req.params.templateId, req.body)));

  app.patch<{ Params: TemplateParams; Body: PatchBody }>(T, {
    schema: { tags, summary: 'Change the display name or description', params: TemplateParams, body: PatchBody, response: { 200: Answers.template } },
    config: anyCredential,
  }, async (req) => templateOut(await service.patch(principal(req), req.params.templateId, req.body)));

  app.put<{ Params: TemplateParams; Body: VisibilityBody }>(`${T}/visibility`, {
    schema: { tags, summary: 'Set the visibility (private to public is reviewed)', params: TemplateParams, body: VisibilityBody, response: { 200: Answers.template } },
    config: anyCredential,
  }, async (req) => templateOut(await service.setVisibility(principal(req), req.params.templateId, req.body.visibility)));

  app.put<{ Params: TemplateParams }>(`${T}/unlist`, {
    schema: { tags, summary: 'Take the template off other organizations\' catalog lists', params: TemplateParams, response: { 200: Answers.template } },
    config: { ...anyCredential, bodyUnchecked: NO_BODY },
  }, async (req) => templateOut(await service.unlist(principal(req), req.params.templateId)));

  app.put<{ Params: VersionParams; Body: DeprecateBody }>('/templates/:templateId/versions/:version/deprecate', {
    schema: { tags, summary: 'Deprecate a version: blocks new installs of it only', params: VersionParams, body: DeprecateBody, response: { 200: Answers.plainVersion } },
    config: anyCredential,
  }, async (req) => versionOut(await service.deprecate(principal(req), req.params.templateId, Number(req.params.version), req.body.reason)));

  app.put<{ Params: TemplateParams; Body: OwnerBody }>('/templates/:templateId/owner', {
    schema: { tags, summary: 'Transfer the template to another organization (org:manage)', params: TemplateParams, body: OwnerBody, response: { 200: Answers.template } },
    config: anyCredential,
  }, async (req) => templateOut(await service.transfer(principal(req), req.params.templateId, req.body.newOrgId)));

  app.get<{ Querystring: CatalogQuery }>(TEMPLATES_BASE, {
    schema: { tags, summary: 'The catalog: public listed templates and the caller organization\'s own, 1-based pages', querystring: CatalogQuery, response: { 200: Answers.catalog } },
    config: catalog(CATALOG_BUCKETS.list),
  }, async (req, reply) => {
    const q = req.query;
    // The answer's bytes come from this route's own serializer (its response schema), made once per read of the store.
    const body = await service.catalog(principal(req), { firstParty: q.firstParty === undefined ? undefined : q.firstParty === 'true' }, {
      page: Number(q.page ?? '1'), limit: Number(q.limit ?? TEMPLATE_LIMITS.listDefault),
    }, ({ templates, total }) => answerBytes(reply.serialize({ templates: templates.map(templateOut), total })));
    return reply.type('application/json; charset=utf-8').send(body);
  });

  app.get<{ Params: TemplateParams }>(T, {
    schema: { tags, summary: 'One visible template', params: TemplateParams, response: { 200: Answers.template } },
    config: catalog(CATALOG_BUCKETS.read),
  }, async (req) => templateOut(await service.get(principal(req), req.params.templateId)));

  app.get<{ Params: TemplateParams; Querystring: VersionsQuery }>(`${T}/versions`, {
    schema: { tags, summary: 'A template\'s versions, newest first, 1-based pages', params: TemplateParams, querystring: VersionsQuery, response: { 200: Answers.versions } },
    config: catalog(CATALOG_BUCKETS.read),
  }, async (req) => {
    const { versions, total } = await service.versions(principal(req), req.params.templateId, { page: Number(req.query.page ?? '1'), limit: Number(req.query.limit ?? TEMPLATE_LIMITS.listDefault) });
    return { versions: versions.map(versionOut), total };
  });

  app.get<{ Params: VersionParams }>(`${T}/versions/:version`, {
    schema: { tags, summary: 'One version', params: VersionParams, response: { 200: Answers.plainVersion } },
    config: catalog(CATALOG_BUCKETS.read),
  }, async (req) => versionOut(await service.version(principal(req), req.params.templateId, Number(req.params.version))));

  app.get<{ Params: TemplateParams }>(`${T}/review`, {
    schema: { tags, summary: 'The template\'s review state: each version\'s approval, newest first (marketplace:read)', params: TemplateParams, response: { 200: Answers.review } },
    config: anyCredential,
  }, async (req) => {
    const { template, versions } = await service.review(principal(req), req.params.templateId);
    return reviewOut(template, versions);
  });

  app.get<{ Params: TemplateParams; Querystring: ManifestQuery }>(`${T}/manifest`, {
    schema: { tags, summary: 'The latest version\'s manifest with its install seal (contentHash)', params: TemplateParams, querystring: ManifestQuery, response: { 200: Answers.manifest } },
    config: catalog(CATALOG_BUCKETS.read),
  }, async (req, reply) => {
    const body = await service.manifestAnswer(principal(req), req.params.templateId, undefined, (template, version) => answerBytes(reply.serialize(manifestOut(template, version))));
    return reply.type('application/json; charset=utf-8').send(body);
  });

  app.get<{ Params: VersionParams; Querystring: ManifestQuery }>(`${T}/versions/:version/manifest`, {
    schema: { tags, summary: 'One version\'s manifest with its install seal (contentHash)', params: VersionParams, querystring: ManifestQuery, response: { 200: Answers.manifest } },
    config: catalog(CATALOG_BUCKETS.read),
  }, async (req, reply) => {
    const body = await service.manifestAnswer(principal(req), req.params.templateId, Number(req.params.version), (template, version) => answerBytes(reply.serialize(manifestOut(template, version))));
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
