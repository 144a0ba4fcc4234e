/**
 * Outcome-driven state moves (docs/delivery.md, "Drain states"): a healthy drain whose
 * last `degradeAfter` attempts failed becomes `degraded`; a degraded drain
 * whose last `recoverAfter` attempts succeeded becomes `healthy`. Moves go through
 * `moveDrain`, conditional on the state the deliverer's plan holds, so they never
 * undo a pause or a PATCH; they are not mutations and write no audit entry.
 */
import type { Drain } from '../model/drain.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../telemetry/logger.js';
import { moveDrain } from './move.js';
import { movesBy } from './lifecycle.js';

/** Who outcome-driven moves are made by. */
const HEALTH_ACTOR = { type: 'system', id: 'drain-health' } as const;

/** Told of every attempt's outcome by the deliverer: drives healthy <-> degraded. */
export interface AttemptObserver {
  attempted(drain: Drain, ok: boolean): void;
}

export const DEGRADE_AFTER_FAILURES = 3;
export const RECOVER_AFTER_SUCCESSES = 5;

export function createDrainHealth(opts: {
  store: Pick<Store, 'unitOfWork'>;
  logger: Logger;
  degradeAfter?: number;
  recoverAfter?: number;
}): AttemptObserver {
  const degradeAfter = opts.degradeAfter ?? DEGRADE_AFTER_FAILURES;
  const recoverAfter = opts.recoverAfter ?? RECOVER_AFTER_SUCCESSES;
  const streaks = new Map<string, { ok: boolean; n: number }>();

  const move = (drain: Drain, event: 'attempts_failed' | 'attempts_succeeded') => {
    if (!movesBy(drain, event)) return;
    streaks.delete(drain.id);
    const from = drain.state;
    opts.store.unitOfWork((tx) => moveDrain(tx, drain, event, HEALTH_ACTOR)).then(
      (moved) => moved.ok && opts.logger.info({ event: 'drain.state', drainId: drain.id, from, to: moved.drain.state }, `drain ${moved.drain.state}`),
      (e) => opts.logger.warn({ event: 'drain.state_failed', drainId: drain.id, err: (e as Error).message }, 'state move failed'),
    );
  };

  return {
    attempted(drain, ok) {
      const s = streaks.get(drain.id);
      const n = s && s.ok === ok ? s.n + 1 : 1;
      streaks.set(drain.id, { ok, n });
      if (!ok && n >= degradeAfter && drain.state === 'healthy') move(drain, 'attempts_failed');
      if (ok && n >= recoverAfter && drain.state === 'degraded') move(drain, 'attempts_succeeded');
    },
  };
}
