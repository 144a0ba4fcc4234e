/**
 * A drain's state moves here and nowhere else. `moveDrain` asks the lifecycle
 * (lifecycle.ts) where an event takes the drain as it was read, writes the new
 * state only while the stored drain is still in the state (and pause reason) that
 * read saw, and writes the move's audit entry in the same transaction: a move
 * decided on a stale read never undoes a concurrent one, and a move is never
 * recorded without happening, nor the other way round.
 *
 * Its answer is a value: the moved drain, or a refusal with a code. The caller
 * decides what a refusal means to it (the resume route answers the drain as it
 * is; a quota move waits for the next ladder run with fresh plans).
 */
import { AppError } from '../errors.js';
import type { Drain, DrainState } from '../model/drain.js';
import { drainAuditEntry, type Actor } from '../audit/drain-audit.js';
import type { AuditEntry } from '../store/audit-repo.js';
import type { DrainUnitOfWork } from '../modules/drains/tables/index.js';
import { nextState, type DrainEvent } from './lifecycle.js';

/**
 * The audit action each event records (spec 01 part 6.3). Moves made by delivery outcomes are
 * not mutations: the spec names no entry for them, and they write none.
 */
const AUDIT_ACTION: Record<DrainEvent, string | undefined> = {
  endpoint_changed: 'logs.drain.updated',
  verified: 'logs.drain.verified',
  paused_manually: 'logs.drain.paused',
  paused_by_quota: 'logs.drain.quota_paused',
  resumed: 'logs.drain.resumed',
  quota_reset: 'logs.drain.resumed',
  attempts_failed: undefined,
  attempts_succeeded: undefined,
};

/** The codes a refused move answers with. */
export const MOVE_REFUSALS = {
  /** The event does not move a drain in the state it was read in (resume of a drain not paused). */
  illegal: 'DRAIN_EVENT_NOT_ALLOWED',
  /** The stored drain is no longer in the state it was read in: nothing was written. */
  raced: 'DRAIN_STATE_CHANGED',
  /** The drain was deleted (or never was). */
  gone: 'DRAIN_GONE',
} as const;

export type MoveRefusalCode = (typeof MOVE_REFUSALS)[keyof typeof MOVE_REFUSALS];

export type MoveResult =
  | { ok: true; drain: Drain; from: DrainState; audit: AuditEntry | undefined }
  /** `current`: the drain as it now is, when it lost a race (to decide again from it). */
  | { ok: false; error: AppError & { code: MoveRefusalCode }; current?: Drain };

/** What a move needs of a unit of work: the drain rows and the audit, in one transaction. */
export type MoveTx = Pick<DrainUnitOfWork, 'drains' | 'audit'>;

const refusal = (status: number, code: MoveRefusalCode, message: string, details: Record<string, unknown>) =>
  new AppError(status, code, message, details) as AppError & { code: MoveRefusalCode };

/**
 * Moves `drain` (as it was read) by `event` in the transaction `tx`, and records the move as
 * `actor`'s with `details` beside the drain's audit snapshot.
 */
export async function moveDrain(
  tx: MoveTx,
  drain: Drain,
  event: DrainEvent,
  actor: Actor,
  details: Record<string, unknown> = {},
): Promise<MoveResult> {
  const where = { drainId: drain.id, event, state: drain.state };
  const move = nextState(drain, event);
  if (!move) {
    return { ok: false, error: refusal(409, MOVE_REFUSALS.illegal, `Event ${event} does not move a drain in state ${drain.state}.`, where) };
  }
  const moved = await tx.drains.moveState(drain.id, { state: drain.state, pauseReason: drain.pauseReason }, { state: move.state, pauseReason: move.pauseReason });
  if (!moved) {
    const current = await tx.drains.get(drain.orgId, drain.id);
    if (!current) return { ok: false, error: refusal(404, MOVE_REFUSALS.gone, 'The drain no longer exists.', where) };
    return {
      ok: false,
      error: refusal(409, MOVE_REFUSALS.raced, `The drain moved from ${drain.state} to ${current.state} meanwhile; nothing was written.`, { ...where, current: current.state }),
      current,
    };
  }
  const action = AUDIT_ACTION[event];
  const audit = action === undefined ? undefined : await tx.audit(drainAuditEntry(actor, action, moved, details));
  return { ok: true, drain: moved, from: drain.state, audit };
}

/**
 * `moveDrain` for a request that holds whatever state it finds (a pause, a resume): a lost race
 * is decided again from the drain as it now is, a few times; a refusal is answered as it is.
 */
export async function moveDrainAsItIs(
  tx: MoveTx,
  drain: Drain,
  event: DrainEvent,
  actor: Actor,
  details: Record<string, unknown> = {},
): Promise<MoveResult> {
  let result = await moveDrain(tx, drain, event, actor, details);
  for (let tries = 1; !result.ok && result.current && tries < 3; tries++) {
    result = await moveDrain(tx, result.current, event, actor, details);
  }
  return result;
}
