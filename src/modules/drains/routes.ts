/**
 * The drain routes (spec 01 parts 3 and 4): list, create, read, update (PATCH) and delete; verify,
 * test, pause, resume and rotate-secret; a drain's deliveries; the organization's drain audit. Each
 * parses its request and answers what the service (service.ts) did; the reads of the list and of
 * one drain come from the read cache (read-cache.ts).
 */
import type { FastifyInstance } from 'fastify';
import { drainAccess, DRAINS_BASE, loadDrain, principalOf, type DrainDeps } from './context.js';
import { MAX_DRAINS, type DrainService } from './service.js';
import { composeReadForm, type DrainLive } from './read-form.js';
import type { DrainReadCache } from './read-cache.js';
import type { Drain } from '../../model/drain.js';
import { DAY_MS } from '../../model/time.js';
import { organizationOf } from '../../api/kernel/auth.js';
import { NO_BODY } from '../../api/kernel/schema.js';
import { DrainErrors } from './errors.js';
import { VERIFY_ATTEMPTS_PER_HOUR } from './service.js';
import {
  schemas, type AuditQuery, type DeliveriesQuery, type DrainCreateBody, type DrainParams, type DrainPatchBody, type OrgParams, type PauseBody, type RotateQuery,
} from './schemas.js';
import { drainBodyError, pauseBodyError } from './validation-error.js';

/** What fastify's serializer labels a JSON answer with: a text sent as it is must say the same. */
const JSON_TYPE = 'application/json; charset=utf-8';

export function registerDrainRoutes(app: FastifyInstance, deps: DrainDeps, service: DrainService, reads: DrainReadCache): void {
  const access = drainAccess(deps);
  /** The GET's answer texts, by the live facts they show (read-cache.ts keeps those a second at most). */
  const answers = new WeakMap<DrainLive, { drain: Drain; stamp: string; body: string }>();

  app.get<{ Params: OrgParams }>(DRAINS_BASE, { schema: schemas.list, config: { access } }, async (req) => {
    const nowMs = Date.now();
    // The organization the kernel looked up to authorize the request (kept briefly: kernel/auth.ts).
    const [org, drains] = await Promise.all([organizationOf(deps.store, req.params.orgId), reads.drains(req.params.orgId)]);
    const live = await Promise.all(drains.map((d) => reads.live(d.id, nowMs)));
    return {
      drains: drains.map((d, i) => composeReadForm(d, live[i]!, deps.config.quota, nowMs)),
      limits: { maxDrains: MAX_DRAINS[org?.plan ?? 'standard'] },
    };
  });

  app.post<{ Params: OrgParams; Body: DrainCreateBody }>(DRAINS_BASE, { schema: schemas.create, config: { access, validationError: drainBodyError } }, async (req, reply) => {
    const { read, secret } = await service.create(req.params.orgId, principalOf(req), req.body);
    // The only answer that ever carries the secret.
    return reply.status(201).send(secret === undefined ? read : { ...read, secret });
  });

  app.get<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId`, { schema: schemas.get, config: { access } }, async (req, reply) => {
    const nowMs = Date.now();
    const drain = await loadDrain(deps.drainTables, req.params, reads);
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

  app.patch<{ Params: DrainParams; Body: DrainPatchBody }>(`${DRAINS_BASE}/:drainId`, { schema: schemas.patch, config: { access, validationError: drainBodyError } }, async (req) =>
    service.update(req.params, principalOf(req), req.body),
  );

  app.delete<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId`, { schema: schemas.remove, config: { access } }, async (req, reply) => {
    await service.remove(req.params, principalOf(req));
    return reply.status(204).send();
  });

  app.post<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId/verify`, { schema: schemas.verify, config: { access, bodyUnchecked: NO_BODY } }, async (req, reply) => {
    const started = await service.verify(req.params, principalOf(req));
    if (!started.ok) {
      reply.header('Retry-After', String(started.retryAfterSeconds));
      throw DrainErrors.DRAIN_VERIFY_RATE_LIMITED(`At most ${VERIFY_ATTEMPTS_PER_HOUR} verification attempts per drain an hour.`, { retryAfterSeconds: started.retryAfterSeconds });
    }
    return reply.status(202).send({ verificationId: started.verificationId, expiresAt: started.expiresAt.toISOString() });
  });

  app.post<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId/test`, { schema: schemas.test, config: { access, bodyUnchecked: NO_BODY } }, async (req, reply) => {
    const { batchId, enqueuedAt } = await service.test(req.params, principalOf(req));
    return reply.status(202).send({ batchId, enqueuedAt: enqueuedAt.toISOString() });
  });

  app.post<{ Params: DrainParams; Body: PauseBody | undefined }>(`${DRAINS_BASE}/:drainId/pause`, { schema: schemas.pause, config: { access, validationError: pauseBodyError } }, async (req) =>
    service.pause(req.params, principalOf(req), req.body?.reason),
  );

  app.post<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId/resume`, { schema: schemas.resume, config: { access, bodyUnchecked: NO_BODY } }, async (req) =>
    service.resume(req.params, principalOf(req)),
  );

  app.post<{ Params: DrainParams; Querystring: RotateQuery }>(`${DRAINS_BASE}/:drainId/rotate-secret`, { schema: schemas.rotate, config: { access, bodyUnchecked: NO_BODY } }, async (req) =>
    service.rotateSecret(req.params, principalOf(req), req.query.finalize === 'true'),
  );

  app.get<{ Params: DrainParams; Querystring: DeliveriesQuery }>(`${DRAINS_BASE}/:drainId/deliveries`, { schema: schemas.deliveries, config: { access } }, async (req) =>
    service.deliveries(req.params, req.query),
  );

  // The organization's drain audit entries (our design; spec 01 part 6 fixes what an entry may
  // hold). Query: `drainId`, `action`, `limit` (1-100, default 20), `cursor`.
  app.get<{ Params: OrgParams; Querystring: AuditQuery }>('/admin/orgs/:orgId/log-drains-audit', { schema: schemas.audit, config: { access } }, async (req) =>
    service.auditPage(req.params.orgId, req.query),
  );
}
