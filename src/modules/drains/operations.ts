/** verify, test, pause, resume and rotate-secret (spec 01 parts 3 and 4.2). */
import type { FastifyInstance } from 'fastify';
import { isVerifiedForEndpoint } from '../../model/drain.js';
import { moveDrainAsItIs, MOVE_REFUSALS } from '../../drains/move.js';
import { movesBy } from '../../drains/lifecycle.js';
import { destinationOf } from '../../destinations/index.js';
import { generateSecret } from '../../security/webhook-secret.js';
import { ulid } from 'ulid';
import { DrainErrors, drainNotFound } from './errors.js';
import { actorOf, drainAccess, principalOf, DRAINS_BASE, loadDrain, type DrainDeps, type DrainParams } from './context.js';
import { drainReadForm } from './read-form.js';
import { auditDrain } from '../../audit/drain-audit.js';
import { enqueueTest, enqueueVerification } from './verify.js';
import { schemas, type PauseBody, type RotateQuery } from './schemas.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { pauseBodyError } from './validation-error.js';
import { NO_BODY } from '../../api/kernel/schema.js';
import { HOUR_MS } from '../../model/time.js';

export const VERIFY_ATTEMPTS_PER_HOUR = 5;
export const ROTATION_WINDOW_MS = 24 * 3_600_000;

export function registerOperationRoutes(app: FastifyInstance, deps: DrainDeps): void {
  const { store } = deps;
  const access = drainAccess(deps);

  app.post<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId/verify`, { schema: schemas.verify, config: { access, bodyUnchecked: NO_BODY } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    const now = new Date();
    const window = await store.verifications.windowSince(drain.id, new Date(now.getTime() - HOUR_MS));
    if (window.count >= VERIFY_ATTEMPTS_PER_HOUR) {
      const retryAfter = Math.max(1, Math.ceil(((window.oldest?.getTime() ?? now.getTime()) + HOUR_MS - now.getTime()) / 1000));
      reply.header('Retry-After', String(retryAfter));
      throw DrainErrors.DRAIN_VERIFY_RATE_LIMITED(`At most ${VERIFY_ATTEMPTS_PER_HOUR} verification attempts per drain an hour.`, { retryAfterSeconds: retryAfter });
    }
    // A worker sends the attempt (src/deliver/probes.ts); its outcome lands in `verification` and in deliveries.
    const started = await store.unitOfWork((tx) => enqueueVerification(tx, store.secretBox, drain, actorOf(principal), now));
    return reply.status(202).send({ verificationId: started.verificationId, expiresAt: started.expiresAt.toISOString() });
  });

  app.post<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId/test`, { schema: schemas.test, config: { access, bodyUnchecked: NO_BODY } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    // Spec 01 part 1: delivery begins only once the destination's ownership is verified; a test
    // batch is a delivery, with the drain's stored header values, so it waits for it too.
    if (!isVerifiedForEndpoint(drain)) {
      throw DrainErrors.DRAIN_NOT_VERIFIED('This drain\'s endpoint has not passed verification; verify it before sending a test batch.');
    }
    // A worker sends it through the real delivery path (encode, gzip, sign, POST, retry, account)
    // under this batch id; the probe and its audit entry commit together.
    const batchId = ulid();
    const now = new Date();
    await store.unitOfWork(async (tx) => {
      await enqueueTest(tx, drain, actorOf(principal), batchId, now);
      await auditDrain(tx, actorOf(principal), 'logs.drain.test_sent', drain, { batchId });
    });
    const enqueuedAt = now.toISOString();
    return reply.status(202).send({ batchId, enqueuedAt });
  });

  app.post<{ Params: DrainParams; Body: PauseBody | undefined }>(`${DRAINS_BASE}/:drainId/pause`, { schema: schemas.pause, config: { access, validationError: pauseBodyError } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    const reason = req.body?.reason;
    const updated = await store.unitOfWork(async (tx) => {
      // From any state: a race with another move is decided again from the drain as it now is.
      const moved = await moveDrainAsItIs(tx, drain, 'paused_manually', actorOf(principal), reason === undefined ? {} : { reason });
      if (moved.ok) return moved.drain;
      throw moved.error.code === MOVE_REFUSALS.gone ? drainNotFound() : moved.error;
    });
    return drainReadForm(store, updated, deps.config.quota);
  });

  app.post<{ Params: DrainParams }>(`${DRAINS_BASE}/:drainId/resume`, { schema: schemas.resume, config: { access, bodyUnchecked: NO_BODY } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    // Never straight to healthy: it must prove itself again. A drain whose endpoint was never
    // verified (a new drain, or one moved to another endpoint) goes back to waiting for it.
    // A drain that is not paused is answered as it is.
    if (!movesBy(drain, 'resumed')) return drainReadForm(store, drain, deps.config.quota);
    const result = await store.unitOfWork((tx) => moveDrainAsItIs(tx, drain, 'resumed', actorOf(principal)));
    if (result.ok) return drainReadForm(store, result.drain, deps.config.quota);
    if (result.error.code === MOVE_REFUSALS.gone) throw drainNotFound();
    // No longer paused by the time it was moved: the drain as it now is.
    return drainReadForm(store, result.current ?? (await loadDrain(store, req.params)), deps.config.quota);
  });

  app.post<{ Params: DrainParams; Querystring: RotateQuery }>(`${DRAINS_BASE}/:drainId/rotate-secret`, { schema: schemas.rotate, config: { access, bodyUnchecked: NO_BODY } }, async (req, reply) => {
    const principal = principalOf(req);
    const drain = await loadDrain(store, req.params);
    const raw = req.query.finalize;
    if (!destinationOf(drain.type).signs || !drain.secret) {
      throw DrainErrors.DRAIN_NOT_SIGNED(`${drain.type} drains are not signed; they authenticate with configured headers.`);
    }
    const now = new Date();
    const windowOpen = drain.rotationExpiresAt !== null && drain.rotationExpiresAt > now && drain.previousSecret !== null;
    if (raw === 'true') {
      if (!windowOpen) return drainReadForm(store, drain, deps.config.quota);
      const updated = await store.unitOfWork(async (tx) => {
        const result = await tx.drains.update(drain.orgId, drain.id, { previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null }, true);
        if (!result) throw drainNotFound();
        await auditDrain(tx, actorOf(principal), 'logs.drain.secret_rotated', result, { finalized: true });
        return result;
      });
      return drainReadForm(store, updated, deps.config.quota);
    }
    if (windowOpen) {
      throw DrainErrors.DRAIN_ROTATION_IN_PROGRESS('A rotation window is open; finalize it first (finalize=true).');
    }
    const secret = generateSecret();
    const expiresAt = new Date(now.getTime() + ROTATION_WINDOW_MS);
    await store.unitOfWork(async (tx) => {
      const updated = await tx.drains.update(
        drain.orgId,
        drain.id,
        { secret: store.secretBox.seal(secret), previousSecret: drain.secret, rotationStartedAt: now, rotationExpiresAt: expiresAt },
        true,
      );
      if (!updated) throw drainNotFound();
      await auditDrain(tx, actorOf(principal), 'logs.drain.secret_rotated', updated, { finalized: false });
    });
    return { secret, rotation: { startedAt: now.toISOString(), expiresAt: expiresAt.toISOString() } };
  });
}
