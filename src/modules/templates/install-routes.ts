/**
 * The template install routes (spec 03 part 4.4; contract templates, scopes): install onto an
 * agent, the agent's installs, update preview, consent, setup retry, removal preview and removal.
 * Each declares the agent in its path: `automations:write` for the changes, `marketplace:read` for
 * the reads; the service then checks the template is visible to the caller (else 404). Errors
 * answer in the templates envelope.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantedOf, type Access } from '../../api/kernel/access.js';
import { NO_BODY } from '../../api/kernel/schema.js';
import type { KernelStore } from '../../store/kernel.js';
import { READ_SCOPE, WRITE_SCOPE } from './service.js';
import { knownInstallFields, type InstallService, type InstallTarget } from './install-service.js';
import type { InstallRecord } from './install-repository.js';
import {
  AgentParams, ConsentBody, InstallAnswers, InstallBody, InstallParams, RemoveQuery, UpdatePreviewQuery,
} from './install-schemas.js';
import { TEMPLATES_BASE } from './routes.js';

const onAgent = (required: string) => ({ access: { resource: 'agent', scope: { required } } as Access, errorShape: 'templates' as const });
const tags = ['templates'];

type Listed = InstallRecord & { displayName: string; latestVersion: number; latestApprovedVersion: number | null };

const shortOut = (i: Listed) => ({
  templateId: i.templateId, displayName: i.displayName, installedVersion: i.installedVersion, appliedAt: i.appliedAt.toISOString(),
  installedBy: i.installedBy, status: i.status,
});

const longOut = (i: Listed) => {
  const newest = i.latestApprovedVersion ?? i.latestVersion;
  const setup = i.setup;
  return {
    ...shortOut(i),
    ...(i.latestApprovedVersion !== null ? { latestApprovedVersion: i.latestApprovedVersion } : {}),
    updateAvailable: newest > i.installedVersion, allowCreatorUpdates: i.allowCreatorUpdates, lastError: i.lastError, appliedBy: i.appliedBy,
    // An update the creator published that this install has not consented to take.
    updatePendingConsent: newest > i.installedVersion && !i.allowCreatorUpdates,
    bindings: [], triggers: Object.entries(i.triggers).map(([key, s]) => ({ key, ...s })), outcomes: [], paramValues: {}, params: [],
    ...(setup ? { setup: setup.status === 'ok' ? { status: 'ok', workflowRunId: setup.workflowRunId } : { status: 'failed', code: setup.code, error: setup.error } } : {}),
    ...(setup?.status === 'ok' ? { onInstallWorkflowRunId: setup.workflowRunId } : {}),
    ...(setup?.status === 'failed' ? { onInstallError: { code: setup.code, message: setup.error } } : {}),
  };
};

export function registerInstallRoutes(app: FastifyInstance, service: InstallService, store: KernelStore): void {
  /** The agent the kernel authorized (its organization), with the version the store records. */
  const target = async (req: FastifyRequest): Promise<InstallTarget> => {
    const g = grantedOf(req);
    const agent = await store.auth.agent(g.agentId!);
    return { id: g.agentId!, orgId: g.orgId!, version: agent?.version ?? null };
  };
  const principal = (req: FastifyRequest) => grantedOf(req).principal;

  app.post<{ Params: InstallParams; Body: InstallBody }>(`${TEMPLATES_BASE}/:templateId/install/:agentId`, {
    schema: { tags, summary: 'Install a template version onto an agent (synchronous; unknown body fields stripped; env values sealed, never returned)', params: InstallParams, body: InstallBody, response: { 201: InstallAnswers.result } },
    config: onAgent(WRITE_SCOPE),
    // Every field of the body is optional: no body at all is an install of the latest version with nothing else asked.
    preValidation: async (req) => {
      if (req.body === undefined || req.body === null) req.body = {};
    },
  }, async (req, reply) => reply.status(201).send(await service.install(principal(req), req.params.templateId, await target(req), knownInstallFields(req.body as Record<string, unknown>))));

  app.get<{ Params: AgentParams }>(`${TEMPLATES_BASE}/agent/:agentId`, {
    schema: { tags, summary: 'The templates installed on an agent', params: AgentParams, response: { 200: InstallAnswers.short } },
    config: onAgent(READ_SCOPE),
  }, async (req) => (await service.ofAgent(req.params.agentId)).map(shortOut));

  app.get<{ Params: AgentParams }>('/agents/:agentId/templates', {
    schema: { tags, summary: 'The templates installed on an agent, with their update, consent, trigger and setup state', params: AgentParams, response: { 200: InstallAnswers.long } },
    config: onAgent(READ_SCOPE),
  }, async (req) => (await service.ofAgent(req.params.agentId)).map(longOut));

  app.get<{ Params: InstallParams; Querystring: UpdatePreviewQuery }>('/agents/:agentId/templates/:templateId/update-preview', {
    schema: { tags, summary: 'What moving the install to another version would change (default the latest approved)', params: InstallParams, querystring: UpdatePreviewQuery, response: { 200: InstallAnswers.updatePreview } },
    config: onAgent(READ_SCOPE),
  }, async (req) => service.updatePreview(principal(req), req.params.templateId, req.params.agentId, req.query.toVersion === undefined ? undefined : Number(req.query.toVersion)));

  app.patch<{ Params: InstallParams; Body: ConsentBody }>('/agents/:agentId/templates/:templateId', {
    schema: { tags, summary: 'Set whether the creator\'s updates apply to this install (the only post-install way to change the consent)', params: InstallParams, body: ConsentBody, response: { 200: InstallAnswers.longOne } },
    config: onAgent(WRITE_SCOPE),
  }, async (req) => longOut(await service.setConsent(principal(req), req.params.templateId, req.params.agentId, req.body.allowCreatorUpdates)));

  app.post<{ Params: InstallParams }>('/agents/:agentId/templates/:templateId/setup/retry', {
    schema: { tags, summary: 'Fire the install\'s onInstall hook again when it did not start', params: InstallParams, response: { 201: InstallAnswers.setupRetry } },
    config: { ...onAgent(WRITE_SCOPE), bodyUnchecked: NO_BODY },
  }, async (req, reply) => reply.status(201).send(await service.retrySetup(principal(req), req.params.templateId, await target(req))));

  app.get<{ Params: InstallParams }>(`${TEMPLATES_BASE}/:templateId/installs/:agentId/removal-preview`, {
    schema: { tags, summary: 'What removing the install (and, for a minted agent, the agent) would touch', params: InstallParams, response: { 200: InstallAnswers.removalPreview } },
    config: onAgent(READ_SCOPE),
  }, async (req) => service.removalPreview(principal(req), req.params.templateId, req.params.agentId));

  app.delete<{ Params: InstallParams; Querystring: RemoveQuery }>(`${TEMPLATES_BASE}/:templateId/installs/:agentId`, {
    schema: { tags, summary: 'Uninstall (removeAgent=true also removes an agent this template minted); the uninstall hook is fail-soft', params: InstallParams, querystring: RemoveQuery, response: { 200: InstallAnswers.removed } },
    config: onAgent(WRITE_SCOPE),
  }, async (req) => service.uninstall(principal(req), req.params.templateId, await target(req), req.query.removeAgent === 'true'));
}
