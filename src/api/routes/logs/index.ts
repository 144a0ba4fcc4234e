/**
 * The log read family (spec 01 part 4.3): one agent's logs, an
 * organization's logs, and the organization's NDJSON export, all served from
 * the platform copy the workers write (store/logs-repo.ts).
 */
import type { FastifyInstance } from 'fastify';
import { createAgentGuard, createOrgGuard, type LogDeps } from './context.js';
import { answerLogList } from './list.js';
import { answerDownload } from './download.js';
import { schemas } from './schemas.js';

type Query = { Querystring: Record<string, unknown> };

export function registerLogRoutes(app: FastifyInstance, deps: LogDeps): void {
  const agentGuard = createAgentGuard(deps);
  const orgGuard = createOrgGuard(deps);

  app.get<{ Params: { agentId: string } } & Query>('/developer/agents/:agentId/logs', { schema: schemas.agentLogs }, async (req, reply) =>
    answerLogList(deps, req, reply, await agentGuard(req, reply)),
  );
  app.get<{ Params: { orgId: string } } & Query>('/admin/orgs/:orgId/logs', { schema: schemas.orgLogs }, async (req, reply) =>
    answerLogList(deps, req, reply, await orgGuard(req, reply)),
  );
  app.get<{ Params: { orgId: string } } & Query>('/admin/orgs/:orgId/logs/download', { schema: schemas.orgDownload }, async (req, reply) =>
    answerDownload(deps.store.logs, req.query, reply, await orgGuard(req, reply)),
  );
}

export type { LogDeps };
