/**
 * Idempotency keys for any route family (spec 03: `Idempotency-Key`,
 * `X-Idempotency-Key`). A route reads and validates its key, fingerprints
 * what makes two requests "the same" (requestFingerprint), and runs its
 * effect through withIdempotency: the first request runs it, a retry with the
 * same fingerprint gets the stored outcome back (`replayed: true`, the
 * handler does not run again), another fingerprint under the key answers
 * 409 IDEMPOTENCY_KEY_REUSED, and a retry while the first is still running
 * answers 409 IDEMPOTENCY_KEY_IN_PROGRESS. A handler that throws frees the key
 * (it must throw only before any effect it cannot undo).
 *
 * A route whose effect is a database write can make the effect and the stored
 * outcome one commit: complete the key with `tx.idempotency.complete(...)` in
 * its unit of work (store.unitOfWork) with the claim's id; the completion here
 * then finds nothing left to do.
 */
import { createHash } from 'node:crypto';
import type { AppError } from '../../errors.js';
import { KernelErrors } from './error-registry.js';
import type { Principal } from './auth.js';
import type { IdempotencyOutcome, IdempotencyRepo } from '../../store/idempotency-repo.js';

/**
 * JSON with every object's keys sorted, at every depth: two bodies that differ only in key order
 * give the same text. Otherwise JSON.stringify's rules (toJSON, undefined members left out).
 */
export function canonicalJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(o).sort()) sorted[k] = o[k];
    return sorted;
  });
  // undefined (nothing to serialise) fingerprints as null: a request without a body.
  return text ?? 'null';
}

/** sha-256 (hex) of canonicalJson(value): what a key's first request and its retries are compared by. */
export function requestFingerprint(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** A scope naming the credential's principal: `key:<credentialId>` for an API key, `user:<userId>` for a session. */
export function principalScope(p: Pick<Principal, 'kind' | 'userId' | 'credentialId'>): string {
  return p.kind === 'api_key' ? `key:${p.credentialId}` : `user:${p.userId}`;
}

export interface IdempotentRequest {
  scope: string;
  route: string;
  key: string;
  fingerprint: string;
  /** How long the key is kept; default 24 hours. */
  ttlMs?: number | undefined;
}

export interface IdempotentResult extends IdempotencyOutcome {
  /** True when the answer is the stored outcome of an earlier request. */
  replayed: boolean;
}

export interface WithIdempotencyOptions {
  /** Extra fields for the 409 IDEMPOTENCY_KEY_REUSED body (e.g. the run the key started), from the original outcome. */
  conflictDetails?: (original: IdempotencyOutcome | undefined) => Record<string, unknown>;
  /**
   * Called when the outcome could not be stored after the effect ran. The answer still goes out
   * (the effect happened); the key stays in progress until it expires, so a retry is refused
   * rather than run twice.
   */
  onCompleteFailed?: (e: unknown) => void;
  /** The run completed the key in its own unit of work (`tx.idempotency.complete`): nothing is left to store. */
  completedByRun?: boolean;
}

export const idempotencyKeyReused = (details: Record<string, unknown> = {}): AppError =>
  KernelErrors.IDEMPOTENCY_KEY_REUSED('This idempotency key was already used for a different request.', details);

export const idempotencyKeyInProgress = (): AppError =>
  KernelErrors.IDEMPOTENCY_KEY_IN_PROGRESS('A request with this idempotency key is still in progress; retry later.');

export async function withIdempotency(
  repo: IdempotencyRepo,
  req: IdempotentRequest,
  run: (claim: { claimId: string }) => Promise<IdempotencyOutcome>,
  options: WithIdempotencyOptions = {},
): Promise<IdempotentResult> {
  const claim = await repo.claim(req);
  switch (claim.kind) {
    case 'replay':
      return { status: claim.status, body: claim.body, replayed: true };
    case 'conflict':
      throw idempotencyKeyReused(options.conflictDetails?.(claim.original) ?? {});
    case 'in_progress':
      throw idempotencyKeyInProgress();
    case 'new':
      break;
  }
  const ref = { scope: req.scope, route: req.route, key: req.key, claimId: claim.claimId };
  let outcome: IdempotencyOutcome;
  try {
    outcome = await run({ claimId: claim.claimId });
  } catch (e) {
    // The key is free again; if freeing it fails too, it stays in progress until it expires.
    await repo.abandon(ref).catch(() => {});
    throw e;
  }
  if (options.completedByRun) return { status: outcome.status, body: outcome.body, replayed: false };
  try {
    await repo.complete(ref, outcome);
  } catch (e) {
    options.onCompleteFailed?.(e);
  }
  return { status: outcome.status, body: outcome.body, replayed: false };
}
