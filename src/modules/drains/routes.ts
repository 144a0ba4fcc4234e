/** List, create, read, update (PATCH) and delete (spec 01 part 4.1). */
import type { FastifyInstance } from 'fastify';
import { DrainErrors, drainNotFound } from './errors.js';
import { actorOf, drainAccess, principalOf, DRAINS_BASE, loadDrain, type DrainDeps } from './context.js';
import { buildDrainPatch, buildNewDrain, MAX_DRAINS } from './drain-changes.js';
import { composeReadForm, drainReadForm, type DrainLive } from './read-form.js';
import type { DrainReadCache } from './read-cache.js';
import type { Drain } from '../../model/drain.js';
import { DAY_MS } from '../../model/time.js';
import { organizationOf } from '../../api/kernel/auth.js';
import { auditDrain } from '../../audit/drain-audit.js';
import { moveDrain, MOVE_REFUSALS } from '../../drains/move.js';
import { checkDrainBody } from './validate.js';
import { schemas, type DrainCreateBody, type DrainParams, type DrainPatchBody, type OrgParams } from './schemas.js';
import { drainBodyError } from './validation-error.js';

/** What fastify's serializer labels a JSON answer with: a text sent as it is must say the same. */
const JSON_TYPE = 'application/json; charset=utf-8';

const nameTaken = (name: string) =>
  DrainErrors.DRAIN_NAME_TAKEN(`A drain named ${JSON.stringify(name)} already exists in this organization.`, { field: 'name' });
const isUniqueViolation = (e: unknown) => (e as { code?: string }).code === '23505';

/**
 * `reads`: the reads of the list and of one drain come from the read cache (read-cache.ts); the
 * answers of writes read the store.
 */
export function registerCrudRoutes(app: FastifyInstance, deps: DrainDeps, reads: DrainReadCache): void {
  const { store } = deps;
  const access = drainAccess(deps);
  /** The GET's answer texts, by the live facts they show (read-cache.ts keeps those a second at most). */
  const answers = new WeakMap<DrainLive, { drain: Drain; stamp: string; body: string }>();

  app.get<{ Params: OrgParams }>(DRAINS_BASE, { schema: schemas.list, config: { access } }, async (req, reply) => {
    const nowMs = Date.now();
    // The organization the kernel looked up to authorize the request (kept briefly: kernel/auth.ts).
    const [org, drains] = await Promise.all([organizationOf(store, req.params.orgId), reads.drains(req.params.orgId)]);
    const live = await Promise.all(drains.map((d) => reads.live(d.id, nowMs)));
    return {
      drains: drains.map((d, i) => composeReadForm(d, live[i]!, deps.config.quota, nowMs)),
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
    const nowMs = Date.now();
    const drain = await loadDrain(store, req.params, reads);
    const live = await reads.live(drain.id, nowMs);
    // The answer's text, kept with the cache's entries it was made from: the same drain row, the
    // same live facts, the same day and rotation window give the same text.
    const stamp = `${Math.floor(nowMs / DAY_MS)}|${drain.rotationExpiresAt !== null && drain.rotationExpiresAt.getTime() > nowMs}`;
    const made = answers.get(live);
    if (made && made.drain === drain && made.stamp === stamp) return reply.type(JSON_TYPE).send(made.body);
    // Through the route's response serializer: the schema's fields and no other (the leak guard).
    const body = String(reply.serialize(composeReadForm(drain, live, deps.config.quota, nowMs)));
    answers.set(live, { drain, stamp, body });
    return reply.type(JSON_TYPE).send(body);
  });

  app.patch<{ Params: DrainParams; Body: DrainPatchBody }>(`${DRAINS_BASE}/:drainId`, { schema: schemas.patch, config: { access, validationError: drainBodyError } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    const input = checkDrainBody(req.body);
    const { patch, changed, endpointChanged } = await buildDrainPatch(deps, drain, input);
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
      if (!endpointChanged) {
        await auditDrain(tx, actorOf(principal), 'logs.drain.updated', result, { changed });
        return result;
      }
      // Moved from the row this transaction just wrote (and holds until it commits): the move and
      // the update are one audit entry, as they are one mutation.
      const moved = await moveDrain(tx, result, 'endpoint_changed', actorOf(principal), { changed });
      if (!moved.ok) throw moved.error.code === MOVE_REFUSALS.gone ? drainNotFound() : moved.error;
      return moved.drain;
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
