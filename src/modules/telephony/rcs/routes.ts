/** The RCS agent routes (spec 02 part 4.3) under /developer/orgs/:orgId/rcs-agents. */
import type { FastifyInstance } from 'fastify';
import { SCOPES, actorOf, orgAccess, routeConfig, type TelephonyDeps } from '../context.js';
import { schemas, type CapabilityBody, type LinkBody, type ListQuery, type PatchBody, type RegisterBody } from './schemas.js';
import { RCS_LIST_LIMIT, createRcsService } from './service.js';
import { rcsBulkBucket } from './bulk-limit.js';

export const RCS_BASE = '/developer/orgs/:orgId/rcs-agents';

type AgentParams = { orgId: string; agentId: string };

export function registerRcsRoutes(app: FastifyInstance, deps: TelephonyDeps): void {
  const rcs = createRcsService(deps);
  const read = routeConfig(orgAccess(SCOPES.read));
  const write = routeConfig(orgAccess(SCOPES.write));
  const manage = routeConfig(orgAccess(SCOPES.manage));
  const item = `${RCS_BASE}/:agentId`;

  app.post<{ Params: { orgId: string }; Body: RegisterBody }>(RCS_BASE, { schema: schemas.register, config: write }, async (req, reply) => {
    return reply.status(201).send(await rcs.register(actorOf(req), req.body));
  });

  app.get<{ Params: { orgId: string }; Querystring: ListQuery }>(RCS_BASE, { schema: schemas.list, config: read }, async (req) => {
    return rcs.list(req.params.orgId, req.query.status, req.query.limit ?? RCS_LIST_LIMIT.default, req.query.offset ?? 0);
  });

  app.get<{ Params: AgentParams }>(item, { schema: schemas.get, config: read }, async (req) => rcs.get(req.params.orgId, req.params.agentId));

  app.patch<{ Params: AgentParams; Body: PatchBody }>(item, { schema: schemas.update, config: write }, async (req) => {
    const b = req.body ?? {};
    return rcs.update(actorOf(req), req.params.agentId, {
      displayName: b.displayName, description: b.description, logoUrl: b.logoUrl, bannerUrl: b.bannerUrl, status: b.status, webhookUrl: b.webhookUrl, regions: b.regions,
    });
  });

  app.delete<{ Params: AgentParams }>(item, { schema: schemas.suspend, config: manage }, async (req) => {
    await rcs.suspend(actorOf(req), req.params.agentId);
    return { success: true };
  });

  app.post<{ Params: AgentParams; Body: LinkBody }>(`${item}/link`, { schema: schemas.link, config: write }, async (req, reply) => {
    return reply.status(201).send(await rcs.link(actorOf(req), req.params.agentId, req.body.luaAgentId));
  });

  app.delete<{ Params: AgentParams }>(`${item}/link`, { schema: schemas.unlink, config: manage }, async (req) => rcs.unlink(actorOf(req), req.params.agentId));

  // The capability checks only ask the carrier about numbers and change nothing: served on an archived organization too.
  const check = routeConfig({ ...orgAccess(SCOPES.write), onArchivedOrg: 'serve' });
  app.post<{ Params: AgentParams; Body: CapabilityBody }>(`${item}/capability-check`, { schema: schemas.capability, config: check }, async (req, reply) => {
    return reply.status(201).send(await rcs.checkCapability(req.params.orgId, req.params.agentId, req.body.phoneNumber));
  });

  app.post<{ Params: AgentParams }>(`${item}/bulk-capability-check`, {
    schema: schemas.bulk,
    // The agent must be live, and that is answered before anything about the list (spec 02 part 4.3).
    config: {
      ...routeConfig({ ...orgAccess(SCOPES.write, rcsBulkBucket(deps.config.rcsBulkChecksPerMinute)), onArchivedOrg: 'serve' }),
      bodyUnchecked: 'checked by the service after the RCS agent\'s status, which spec 02 part 4.3 answers first',
    },
  }, async (req, reply) => {
    return reply.status(201).send(await rcs.bulkCapability(req.params.orgId, req.params.agentId, req.body));
  });
}
