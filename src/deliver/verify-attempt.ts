/**
 * One ownership verification attempt (CONTRACT part 5), run by a worker's
 * probe runner (probes.ts). For `http`: a POST carrying the single-use token
 * in `X-Svc-Verify` (its headers and signature: request.ts); it passes when
 * the destination answers 2xx with the token, trimmed, as its body. Vendor
 * types pass on any 2xx from the intake.
 * The outcome lands in the drain's `verification` and in a `verify` delivery
 * record; success moves `pending_verification` to `healthy`.
 */
import { noteDrainActivity } from '../store/change-epochs.js';
import { ulid } from 'ulid';
import type { Drain } from '../model/drain.js';
import type { Store } from '../store/store.js';
import type { Transport } from './transport.js';
import { outcomeOf } from './outcome.js';
import { verificationRequest } from './request.js';
import { compilePlan } from '../plan/drain-plans.js';
import { destinationOf } from '../destinations/index.js';
import { DELIVERY_RETENTION_MS } from '../model/delivery.js';
import { scrubExcerpt } from '../shape/builtin-scrub.js';
import type { Logger } from '../telemetry/logger.js';
import type { Actor } from '../audit/drain-audit.js';
import { auditDrain } from '../audit/drain-audit.js';
import { moveDrain } from '../drains/move.js';
import { movesBy } from '../drains/lifecycle.js';
import { failureReason } from './verify-reason.js';

export interface VerificationToSend {
  verificationId: string;
  /** The token in plain text, opened from the probe just before the attempt. */
  token: string;
}

/** Sends the attempt and records its outcome; true when the destination proved ownership. */
export async function attemptVerification(deps: {
  store: Store;
  transport: Transport;
  logger: Logger;
  drain: Drain;
  verification: VerificationToSend;
  actor: Actor;
}): Promise<boolean> {
  const { store, transport, drain, verification } = deps;
  // Single use: a token is spent by its one attempt, and not at all once expired.
  if (!(await store.verifications.consume(verification.verificationId))) return false;
  const plan = compilePlan(drain, store.secretBox);
  const request = verificationRequest(plan, verification.verificationId, verification.token);
  const startedAt = new Date();
  const result = await transport.post(request);
  // Classified as a delivery attempt is (outcome.ts); a 2xx passes only with the token echoed (http).
  const classified = outcomeOf(result);
  let ok = classified.status === 'success';
  let errorClass: string | undefined = classified.status === 'success' ? undefined : classified.errorClass;
  let statusCode: number | undefined;
  let excerpt: string | undefined;
  if (result.kind === 'response') {
    statusCode = result.statusCode;
    const text = result.body.toString('utf8');
    if (ok && destinationOf(drain.type).verification === 'token-echo' && text.trim() !== verification.token) {
      ok = false;
      errorClass = 'verify_mismatch';
    }
    if (text.length > 0) excerpt = scrubExcerpt(text.slice(0, 1024), [verification.token, ...Object.values(plan.headers)]).slice(0, 1024);
  }
  let reason = ok ? undefined : failureReason(drain, errorClass ?? 'connect', statusCode, result.kind === 'error' ? result.error : undefined);
  await store.deliveries.insertMany([{
    id: ulid(), orgId: drain.orgId, drainId: drain.id, batchId: verification.verificationId, kind: 'verify', attempt: 1,
    statusCode, latencyMs: result.latencyMs, ok, errorClass, responseExcerpt: excerpt, startedAt,
    expiresAt: new Date(startedAt.getTime() + DELIVERY_RETENTION_MS),
  }]);
  // The API's read cache of this process shows the attempt at once (store/change-epochs.ts).
  noteDrainActivity();
  const current = await store.drains.get(drain.orgId, drain.id);
  if (!current) return false;
  // The attempt proved the endpoint it went to: if the drain moved meanwhile, it proves nothing for it.
  if (ok && current.endpoint !== drain.endpoint) {
    ok = false;
    errorClass = 'endpoint_changed';
    reason = 'The drain\'s endpoint changed while this attempt was under way; verify the new endpoint.';
  }
  const outcome = {
    attemptedAt: startedAt.toISOString(), outcome: ok ? 'ok' : 'failed', statusCode, latencyMs: result.latencyMs,
    ...(ok && drain.endpoint !== null ? { endpoint: drain.endpoint } : {}),
    ...(ok ? {} : { errorClass, reason }),
  };
  // The outcome and, on success, the move (a drain waiting for verification starts delivering; any
  // other keeps its state) and its audit entry commit together.
  await store.unitOfWork(async (tx) => {
    const updated = await tx.drains.update(drain.orgId, drain.id, ok ? { verification: outcome, verifiedAt: startedAt } : { verification: outcome }, false);
    if (!ok || !updated) return;
    // Read in this transaction after its own write: the row is held until it commits, so the move cannot lose a race.
    if (movesBy(updated, 'verified')) {
      const moved = await moveDrain(tx, updated, 'verified', deps.actor);
      if (!moved.ok) throw moved.error;
    } else {
      await auditDrain(tx, deps.actor, 'logs.drain.verified', updated, { state: updated.state });
    }
  });
  deps.logger.info({ event: 'drain.verified', drainId: drain.id, ok, statusCode, errorClass }, 'verification attempt finished');
  return ok;
}
