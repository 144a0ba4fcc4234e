/** The phone number routes (spec 02 part 4.2). */
import type { FastifyInstance } from 'fastify';
import { SCOPES, actorOf, orgAccess, routeConfig, type TelephonyDeps } from '../context.js';
import { fieldRule } from '../errors.js';
import { COUNTRY_RULE, countryOf } from './e164.js';
import { schemas, type ListQuery, type PurchaseBody, type SearchQuery } from './schemas.js';
import { LIST_LIMIT, createNumberService } from './service.js';

const BASE = '/developer/orgs/:orgId/phone-numbers';
type NumberParams = { orgId: string; msisdn: string };

export function registerNumberRoutes(app: FastifyInstance, deps: TelephonyDeps): void {
  const numbers = createNumberService(deps);
  const item = `${BASE}/:msisdn`;

  app.get<{ Querystring: SearchQuery }>('/developer/phone-numbers/available', { schema: schemas.search, config: routeConfig({ resource: 'authenticated' }) }, async (req) => {
    const found = await numbers.search(req.query);
    return { numbers: found, count: found.length };
  });

  app.post<{ Params: { orgId: string }; Body: PurchaseBody }>(BASE, { schema: schemas.purchase, config: routeConfig(orgAccess(SCOPES.provision)) }, async (req, reply) => {
    return reply.status(201).send(await numbers.purchase(actorOf(req), req.body ?? {}));
  });

  app.get<{ Params: { orgId: string }; Querystring: ListQuery }>(BASE, { schema: schemas.list, config: routeConfig(orgAccess(SCOPES.read)) }, async (req) => {
    const q = req.query;
    let country: string | undefined;
    if (q.country !== undefined) {
      country = countryOf(q.country);
      if (country === undefined) throw fieldRule('country', COUNTRY_RULE);
    }
    const filter = { status: q.status as 'active' | 'suspended' | 'released' | undefined, country, transport: q.transport as 'carrier-a' | 'carrier-b' | 'byo-sip' | undefined };
    return numbers.list(req.params.orgId, filter, q.limit ?? LIST_LIMIT.default, q.offset ?? 0);
  });

  app.get<{ Params: NumberParams }>(item, { schema: schemas.get, config: routeConfig(orgAccess(SCOPES.read)) }, async (req) => numbers.get(req.params.orgId, req.params.msisdn));

  app.delete<{ Params: NumberParams }>(item, { schema: schemas.release, config: routeConfig(orgAccess(SCOPES.manage)) }, async (req) => {
    await numbers.release(actorOf(req), req.params.msisdn);
    return { success: true };
  });

  app.post<{ Params: NumberParams }>(`${item}/suspend`, { schema: schemas.suspend, config: routeConfig(orgAccess(SCOPES.write)) }, async (req, reply) => {
    return reply.status(201).send(await numbers.suspend(actorOf(req), req.params.msisdn));
  });

  app.post<{ Params: NumberParams }>(`${item}/reactivate`, { schema: schemas.reactivate, config: routeConfig(orgAccess(SCOPES.write)) }, async (req, reply) => {
    return reply.status(201).send(await numbers.reactivate(actorOf(req), req.params.msisdn));
  });

  app.post<{ Params: NumberParams }>(`${item}/configure-voice`, { schema: schemas.configureVoice, config: routeConfig(orgAccess(SCOPES.write)) }, async (req, reply) => {
    await numbers.configureVoice(actorOf(req), req.params.msisdn);
    return reply.status(201).send({ success: true });
  });
}
