/**
 * The deploy routes of the templates family (spec 03 part 4.4; contract templates): deploy and
 * its poll, the deploy session, the eligible targets and the caller's install requests. Each takes
 * any valid credential and checks its scope on the organization it acts on in the service
 * (`automations:write` to deploy, `marketplace:read` to read). Errors answer in the templates
 * envelope; a request that breaks a schema, 400 in the framework shape.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantedOf, type Access } from '../../api/kernel/access.js';
import { keyedByHeader } from '../../api/kernel/store-outage.js';
import type { DeployService, DeployTarget } from './deploy-service.js';
import type { DeploySession } from './deploy-repository.js';
import {
  DeployAnswers, DeployBody, DeployHeaders, DeployParams, MineQuery, SessionBody, SessionQuery, TemplateParams,
} from './deploy-schemas.js';

const anyCredential = { access: { resource: 'authenticated' } as Access, errorShape: 'templates' as const };
const tags = ['templates'];

const sessionOut = (target: DeployTarget, s: DeploySession) => ({
  session: {
    templateId: target.template.id, version: target.version.version, answers: s.answers, connectState: s.connectState,
    idempotencyKey: s.idempotencyKey, updatedAt: s.updatedAt ? s.updatedAt.toISOString() : null,
  },
  copy: { title: `Deploy ${target.template.displayName}`, description: target.template.description, version: target.version.version },
});

const versionOf = (q: SessionQuery): number | undefined => (q.version === undefined ? undefined : Number(q.version));

export function registerDeployRoutes(app: FastifyInstance, service: DeployService): void {
  const principal = (req: FastifyRequest) => grantedOf(req).principal;

  app.post<{ Params: TemplateParams; Body: DeployBody; Headers: DeployHeaders }>('/marketplace/templates/:templateId/deploy', {
    schema: {
      tags, summary: 'Mint an agent from a base-agent template and install the template on it (Idempotency-Key required)',
      params: TemplateParams, headers: DeployHeaders, body: DeployBody, response: { 201: DeployAnswers.created, 202: DeployAnswers.accepted },
    },
    // Keyed: a retry after a store outage answers the one deploy.
    config: { ...anyCredential, blindRetry: keyedByHeader('idempotency-key') },
  }, async (req, reply) => {
    const r = await service.deploy(principal(req), req.params.templateId, req.body, req.headers['idempotency-key']);
    return reply.status(r.status).send(r.body);
  });

  app.get<{ Params: DeployParams }>('/marketplace/templates/deploys/:deployId', {
    schema: { tags, summary: 'A deploy: status, stage, result or error', params: DeployParams, response: { 200: DeployAnswers.poll } },
    config: anyCredential,
  }, async (req) => service.view(principal(req), req.params.deployId));

  app.get<{ Params: TemplateParams; Querystring: SessionQuery }>('/marketplace/templates/:templateId/deploy-session', {
    schema: { tags, summary: 'The caller\'s deploy session for the template and version', params: TemplateParams, querystring: SessionQuery, response: { 200: DeployAnswers.session } },
    config: anyCredential,
  }, async (req) => {
    const { target, session } = await service.session(principal(req), req.params.templateId, versionOf(req.query));
    return sessionOut(target, session);
  });

  app.put<{ Params: TemplateParams; Querystring: SessionQuery; Body: SessionBody }>('/marketplace/templates/:templateId/deploy-session', {
    schema: { tags, summary: 'Deep-merge answers, connectState and idempotencyKey into the caller\'s deploy session', params: TemplateParams, querystring: SessionQuery, body: SessionBody, response: { 200: DeployAnswers.session } },
    config: anyCredential,
  }, async (req) => {
    const b = req.body;
    const { target, session } = await service.mergeSession(principal(req), req.params.templateId, versionOf(req.query), {
      answers: b.answers, connectState: b.connectState, idempotencyKey: b.idempotencyKey,
    });
    return sessionOut(target, session);
  });

  app.get<{ Params: TemplateParams }>('/templates/:templateId/eligible-targets', {
    schema: { tags, summary: 'The caller\'s organization\'s agents and whether the template can be installed on each', params: TemplateParams, response: { 200: DeployAnswers.targets } },
    config: anyCredential,
  }, async (req) => service.eligibleTargets(principal(req), req.params.templateId));

  app.get<{ Querystring: MineQuery }>('/marketplace/templates/install-requests/mine', {
    schema: { tags, summary: 'The caller\'s install requests in the organization', querystring: MineQuery, response: { 200: DeployAnswers.mine } },
    config: anyCredential,
  }, async (req) => service.myInstallRequests(principal(req), req.query.orgId));
}
