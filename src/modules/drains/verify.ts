/**
 * The request side of ownership verification (CONTRACT part 5): a single-use
 * token, its hash in `drain_verifications`, and a `verify` probe carrying the
 * token sealed, for a worker to send (src/deliver/probes.ts). The API sends
 * nothing itself; where no worker runs (`serve` alone), the probe waits for one.
 */
import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import type { Drain } from '../../model/drain.js';
import type { KernelStore } from '../../store/kernel.js';
import type { DrainTablesTx } from './tables/index.js';
import type { Actor } from '../../audit/drain-audit.js';
import { hashToken } from '../../security/token-hash.js';

export const VERIFY_TOKEN_TTL_MS = 10 * 60_000;

export interface EnqueuedVerification {
  verificationId: string;
  expiresAt: Date;
}

/** Records the verification and enqueues its probe in `tx`: both commit, or neither. */
export async function enqueueVerification(
  tx: Pick<DrainTablesTx, 'verifications' | 'probes'>,
  box: KernelStore['secretBox'],
  drain: Drain,
  actor: Actor,
  now = new Date(),
): Promise<EnqueuedVerification> {
  const token = randomBytes(24).toString('base64url');
  const v = { verificationId: ulid(), expiresAt: new Date(now.getTime() + VERIFY_TOKEN_TTL_MS) };
  await tx.verifications.insert({
    id: v.verificationId, drainId: drain.id, tokenHash: hashToken(token), createdAt: now, expiresAt: v.expiresAt,
  });
  await tx.probes.insert({
    id: ulid(), kind: 'verify', orgId: drain.orgId, drainId: drain.id, batchId: v.verificationId,
    sealedToken: box.seal(token), actor, enqueuedAt: now,
  });
  return v;
}

/** Enqueues a `test` probe under `batchId` (the id the 202 answers and the worker sends). */
export async function enqueueTest(tx: Pick<DrainTablesTx, 'probes'>, drain: Drain, actor: Actor, batchId: string, now: Date): Promise<void> {
  await tx.probes.insert({ id: ulid(), kind: 'test', orgId: drain.orgId, drainId: drain.id, batchId, actor, enqueuedAt: now });
}
