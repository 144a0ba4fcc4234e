/**
 * The drain's states and the events that move them (spec 01 part 3), in one
 * place. Only this folder asks it: every state change anywhere (the API's
 * mutations, verification, the worker's outcome streaks, the quota ladder)
 * goes through `moveDrain` (move.ts), which asks `nextState` where an event
 * takes a drain and moves it there only while the drain is still as it was
 * read, so a move decided on a stale read never undoes a concurrent one.
 *
 *   created ............................ -> pending_verification (INITIAL_STATE)
 *   endpoint_changed (any state) ....... -> pending_verification (a new endpoint proves itself)
 *   verified (pending_verification) .... -> healthy
 *   paused: manual (any state) ......... -> paused, pauseReason manual
 *   paused: quota (not paused) ......... -> paused, pauseReason quota
 *   resumed (paused) ................... -> degraded if its endpoint was verified, else pending_verification
 *   quota_reset (paused by the quota) .. -> the same as resumed
 *   attempts_failed (healthy) .......... -> degraded (3 consecutive failed attempts)
 *   attempts_succeeded (degraded) ...... -> healthy (5 consecutive successful attempts)
 */
import { isVerifiedForEndpoint, type Drain, type DrainState } from '../model/drain.js';

/** A new drain waits for its endpoint's verification. */
export const INITIAL_STATE: DrainState = 'pending_verification';

export type DrainEvent =
  | 'endpoint_changed'
  | 'verified'
  | 'paused_manually'
  | 'paused_by_quota'
  | 'resumed'
  | 'quota_reset'
  | 'attempts_failed'
  | 'attempts_succeeded';

export interface Move {
  state: DrainState;
  pauseReason: 'manual' | 'quota' | null;
  /** The states the move applies from (the store moves only a drain still in one of them). */
  from: readonly DrainState[];
}

const ALL: readonly DrainState[] = ['pending_verification', 'healthy', 'degraded', 'paused'];

/** Where `event` takes `drain`; undefined when it does not move a drain in its state. */
export function nextState(drain: Pick<Drain, 'state' | 'pauseReason' | 'verifiedAt' | 'verification' | 'endpoint'>, event: DrainEvent): Move | undefined {
  const move = (state: DrainState, pauseReason: Move['pauseReason'], from: readonly DrainState[]): Move | undefined =>
    from.includes(drain.state) ? { state, pauseReason, from } : undefined;
  // Never straight to healthy after a pause: it proves itself again; never delivering to an endpoint never verified.
  const afterPause = (): DrainState => (isVerifiedForEndpoint(drain) ? 'degraded' : 'pending_verification');
  switch (event) {
    case 'endpoint_changed':
      return move('pending_verification', null, ALL);
    case 'verified':
      return move('healthy', null, ['pending_verification']);
    case 'paused_manually':
      return move('paused', 'manual', ALL);
    case 'paused_by_quota':
      return move('paused', 'quota', ['healthy', 'degraded', 'pending_verification']);
    case 'resumed':
      return move(afterPause(), null, ['paused']);
    case 'quota_reset':
      return drain.pauseReason === 'quota' ? move(afterPause(), null, ['paused']) : undefined;
    case 'attempts_failed':
      return move('degraded', null, ['healthy']);
    case 'attempts_succeeded':
      return move('healthy', null, ['degraded']);
  }
}

/** Whether `event` moves `drain` in its state (a move may still lose a race: move.ts). */
export const movesBy = (drain: Parameters<typeof nextState>[0], event: DrainEvent): boolean => nextState(drain, event) !== undefined;
