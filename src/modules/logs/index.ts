/**
 * The log read family (spec 01 part 4.3): one agent's logs, one skill's logs
 * on an agent, an organization's logs, and the organization's NDJSON export,
 * all served from the platform copy the workers write (repository.ts), whose reads the
 * composition root hands the family (`LogDeps.logs`).
 */
import type { FastifyInstance } from 'fastify';
import { agentLogsAccess, DEPRECATED_SCOPE, logQueryOf, orgLogsAccess, type LogDeps } from './context.js';
import { answerLogList } from './list.js';
import { answerDownload } from './download.js';
import { schemas } from './schemas.js';
import { defineFamily } from '../../api/kernel/family.js';
import type { DownloadQuery, ListQuery } from './schemas.js';

export const logsFamily = defineFamily<LogDeps>({ name: 'logs', register: registerLogRoutes });

function registerLogRoutes(app: FastifyInstance, deps: LogDeps): void {
  const agent = agentLogsAccess(deps);
  const skill = agentLogsAccess(deps, DEPRECATED_SCOPE.skillLogs);
  const org = orgLogsAccess(deps);

  app.get<{ Params: { agentId: string }; Querystring: ListQuery }>('/developer/agents/:agentId/logs', { schema: schemas.agentLogs, config: { access: agent } }, async (req, reply) =>
    answerLogList(deps, req, reply, await logQueryOf(deps, req)),
  );
  // The agent's read restricted to one skill's records (contract skills.md, "skill logs"). The
  // static `agents` segment of the route above wins over `:agentId` here, as routes match.
  app.get<{ Params: { agentId: string; skillId: string }; Querystring: ListQuery }>('/developer/:agentId/:skillId/logs', { schema: schemas.skillLogs, config: { access: skill } }, async (req, reply) =>
    answerLogList(deps, req, reply, { ...(await logQueryOf(deps, req)), skillId: req.params.skillId }),
  );
  app.get<{ Params: { orgId: string }; Querystring: ListQuery }>('/admin/orgs/:orgId/logs', { schema: schemas.orgLogs, config: { access: org } }, async (req, reply) =>
    answerLogList(deps, req, reply, await logQueryOf(deps, req)),
  );
  app.get<{ Params: { orgId: string }; Querystring: DownloadQuery }>('/admin/orgs/:orgId/logs/download', { schema: schemas.orgDownload, config: { access: org } }, async (req, reply) =>
    answerDownload(deps.logs, req.query, reply, await logQueryOf(deps, req)),
  );
}

export type { LogDeps };
