/** List, create, read, update (PATCH) and delete (spec 01 part 4.1). */
import type { FastifyInstance } from 'fastify';
import { DrainErrors, drainNotFound } from './errors.js';
import { actorOf, drainAccess, principalOf, DRAINS_BASE, loadDrain, type DrainDeps } from './context.js';
import { buildDrainPatch, buildNewDrain, MAX_DRAINS } from './drain-changes.js';
import { drainReadForm } from './read-form.js';
import { auditDrain } from '../../audit/drain-audit.js';
import { checkDrainBody } from './validate.js';
import { schemas, type DrainCreateBody, type DrainParams, type DrainPatchBody, type OrgParams } from './schemas.js';
import { drainBodyError } from './validation-error.js';

const nameTaken = (name: string) =>
  DrainErrors.DRAIN_NAME_TAKEN(`A drain named ${JSON.stringify(name)} already exists in this organization.`, { field: 'name' });
const isUniqueViolation = (e: unknown) => (e as { code?: string }).code === '23505';

export function registerCrudRoutes(app: FastifyInstance, deps: DrainDeps): void {
  const { store } = deps;
  const access = drainAccess(deps);

  app.get<{ Params: OrgParams }>(DRAINS_BASE, { schema: schemas.list, config: { access } }, async (req, reply) => {
    const org = await store.auth.org(req.params.orgId);
    const drains = await store.drains.listByOrg(req.params.orgId);
    return {
      drains: await Promise.all(drains.map((d) => drainReadForm(store, d, deps.config.quota))),
      limits: { maxDrains: MAX_DRAINS[org?.plan ?? 'standard'] },
    };
  });

  app.post<{ Params: OrgParams; Body: DrainCreateBody }>(DRAINS_BASE, { schema: schemas.create, config: { access, validationError: drainBodyError } }, async (req, reply) => {
    const principal = principalOf(req);
    const input = checkDrainBody(req.body);
    const { drain, secret } = await buildNewDrain(deps, req.params.orgId, principal, input);
    // The drain and its audit entry commit together.
    await store.unitOfWork(async (tx) => {
      try {
        await tx.drains.insert(drain);
      } catch (e) {
        if (isUniqueViolation(e)) throw nameTaken(drain.name);
        throw e;
      }
      await auditDrain(tx, actorOf(principal), 'logs.drain.created', drain);
    });
    const read = await drainReadForm(store, drain, deps.config.quota);
    // The only answer that ever carries the secret.
    return reply.status(201).send(secret === undefined ? read : { ...read, secret });
  });

  app.get<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId`, { schema: schemas.get, config: { access } }, async (req, reply) => {
    return drainReadForm(store, await loadDrain(store, req.params), deps.config.quota);
  });

  app.patch<{ Params: DrainParams; Body: DrainPatchBody }>(`${DRAINS_BASE}/:drainId`, { schema: schemas.patch, config: { access, validationError: drainBodyError } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    const input = checkDrainBody(req.body);
    const { patch, changed } = await buildDrainPatch(deps, drain, input);
    if (changed.length === 0) return drainReadForm(store, drain, deps.config.quota);
    const updated = await store.unitOfWork(async (tx) => {
      let result;
      try {
        result = await tx.drains.update(drain.orgId, drain.id, patch, true);
      } catch (e) {
        if (isUniqueViolation(e)) throw nameTaken(input.name ?? '');
        throw e;
      }
      if (!result) throw drainNotFound();
      await auditDrain(tx, actorOf(principal), 'logs.drain.updated', result, { changed });
      return result;
    });
    return drainReadForm(store, updated, deps.config.quota);
  });

  app.delete<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId`, { schema: schemas.remove, config: { access } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    await store.unitOfWork(async (tx) => {
      if (!(await tx.drains.softDelete(drain.orgId, drain.id))) throw drainNotFound();
      await auditDrain(tx, actorOf(principal), 'logs.drain.deleted', { ...drain, state: drain.state });
    });
    return reply.status(204).send();
  });
}
