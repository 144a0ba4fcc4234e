/**
 * The log read family (spec 01 part 4.3): one agent's logs, an
 * organization's logs, and the organization's NDJSON export, all served from
 * the platform copy the workers write (store/logs-repo.ts).
 */
import type { FastifyInstance } from 'fastify';
import { agentLogsAccess, logQueryOf, orgLogsAccess, type LogDeps } from './context.js';
import { answerLogList } from './list.js';
import { answerDownload } from './download.js';
import { schemas } from './schemas.js';
import { defineFamily } from '../../api/kernel/family.js';
import type { DownloadQuery, ListQuery } from './schemas.js';

export const logsFamily = defineFamily<LogDeps>({ name: 'logs', register: registerLogRoutes });

function registerLogRoutes(app: FastifyInstance, deps: LogDeps): void {
  const agent = agentLogsAccess(deps);
  const org = orgLogsAccess(deps);

  app.get<{ Params: { agentId: string }; Querystring: ListQuery }>('/developer/agents/:agentId/logs', { schema: schemas.agentLogs, config: { access: agent } }, async (req, reply) =>
    answerLogList(deps, req, reply, await logQueryOf(deps, req)),
  );
  app.get<{ Params: { orgId: string }; Querystring: ListQuery }>('/admin/orgs/:orgId/logs', { schema: schemas.orgLogs, config: { access: org } }, async (req, reply) =>
    answerLogList(deps, req, reply, await logQueryOf(deps, req)),
  );
  app.get<{ Params: { orgId: string }; Querystring: DownloadQuery }>('/admin/orgs/:orgId/logs/download', { schema: schemas.orgDownload, config: { access: org } }, async (req, reply) =>
    answerDownload(deps.store.logs, req.query, reply, await logQueryOf(deps, req)),
  );
}

export type { LogDeps };
