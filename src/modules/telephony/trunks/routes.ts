/** The SIP trunk routes (spec 02 part 4.1) under /developer/orgs/:orgId/sip-trunks. */
import type { FastifyInstance } from 'fastify';
import { SCOPES, actorOf, orgAccess, routeConfig, type TelephonyDeps } from '../context.js';
import { fieldRule } from '../errors.js';
import { USERNAME_RULE } from './digest.js';
import { schemas, type AclBody, type CreateBody, type CredentialBody } from './schemas.js';
import { createTrunkService } from './service.js';

export const TRUNKS_BASE = '/developer/orgs/:orgId/sip-trunks';

type TrunkParams = { orgId: string; trunkId: string };

export function registerTrunkRoutes(app: FastifyInstance, deps: TelephonyDeps): void {
  const trunks = createTrunkService(deps);
  const read = routeConfig(orgAccess(SCOPES.read));
  const write = routeConfig(orgAccess(SCOPES.write));
  const manage = routeConfig(orgAccess(SCOPES.manage));
  const item = `${TRUNKS_BASE}/:trunkId`;

  app.post<{ Params: { orgId: string }; Body: CreateBody }>(TRUNKS_BASE, { schema: schemas.create, config: write }, async (req, reply) => {
    return reply.status(201).send(await trunks.create(actorOf(req), req.body ?? {}));
  });

  app.get<{ Params: { orgId: string } }>(TRUNKS_BASE, { schema: schemas.list, config: read }, async (req) => {
    const list = await trunks.list(req.params.orgId);
    return { trunks: list, count: list.length };
  });

  app.get<{ Params: TrunkParams }>(item, { schema: schemas.get, config: read }, async (req) => trunks.get(req.params.orgId, req.params.trunkId));

  app.delete<{ Params: TrunkParams }>(item, { schema: schemas.remove, config: manage }, async (req) => {
    await trunks.remove(actorOf(req), req.params.trunkId);
    return { success: true };
  });

  app.post<{ Params: TrunkParams; Body: AclBody }>(`${item}/acl`, { schema: schemas.addAcl, config: write }, async (req, reply) => {
    return reply.status(201).send(await trunks.addAcl(actorOf(req), req.params.trunkId, req.body.ip, req.body.description));
  });

  app.delete<{ Params: TrunkParams & { ip: string } }>(`${item}/acl/:ip`, { schema: schemas.removeAcl, config: manage }, async (req) => {
    return trunks.removeAcl(actorOf(req), req.params.trunkId, req.params.ip);
  });

  app.post<{ Params: TrunkParams; Body: CredentialBody }>(`${item}/credentials`, { schema: schemas.createUser, config: write }, async (req, reply) => {
    const username = req.body?.username;
    if (username === undefined) throw fieldRule('username', USERNAME_RULE);
    return reply.status(201).send(await trunks.createUser(actorOf(req), req.params.trunkId, username));
  });

  app.get<{ Params: TrunkParams }>(`${item}/credentials`, { schema: schemas.listUsers, config: read }, async (req) => {
    return { users: await trunks.listUsers(req.params.orgId, req.params.trunkId) };
  });

  app.delete<{ Params: TrunkParams & { username: string } }>(`${item}/credentials/:username`, { schema: schemas.deleteUser, config: manage }, async (req) => {
    await trunks.deleteUser(actorOf(req), req.params.trunkId, req.params.username);
    return { success: true };
  });

  app.post<{ Params: TrunkParams & { username: string } }>(`${item}/credentials/:username/rotate`, { schema: schemas.rotateUser, config: write }, async (req, reply) => {
    return reply.status(201).send(await trunks.rotateUser(actorOf(req), req.params.trunkId, req.params.username));
  });

  // telephony:read on the organization here; telephony:write on the agent in the service (contract T2).
  app.post<{ Params: TrunkParams & { agentId: string } }>(`${item}/agents/:agentId`, { schema: schemas.link, config: read }, async (req, reply) => {
    return reply.status(201).send(await trunks.linkAgent(actorOf(req), req.params.trunkId, req.params.agentId));
  });

  app.delete<{ Params: TrunkParams }>(`${item}/agent`, { schema: schemas.unlink, config: manage }, async (req) => trunks.unlinkAgent(actorOf(req), req.params.trunkId));
}
