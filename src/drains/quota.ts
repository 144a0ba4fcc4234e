/**
 * The quota ladder's moves (spec 01 part 3): a drain at the top of the ladder
 * is paused (`logs.drain.quota_paused`), and one the quota paused goes back
 * when the day's use falls below it (`logs.drain.resumed`, `quota reset`).
 * The worker's drain registry decides the level (plan/drain-registry.ts); the
 * move and its audit entry commit together.
 */
import type { Drain } from '../model/drain.js';
import type { Degradation, Usage } from '../model/quota-ladder.js';
import type { Store } from '../store/store.js';
import { moveDrain, type MoveResult } from './move.js';
import { movesBy, type DrainEvent } from './lifecycle.js';

/** Who quota moves are recorded as. */
export const QUOTA_ACTOR = { type: 'system', id: 'quota-ladder' } as const;

/**
 * Moves `drain` (as the registry's plans hold it) for its place on the ladder: undefined when the
 * level asks nothing of it; otherwise the move's result (a drain that changed since the plans were
 * read is left for the next run, which reads it again).
 */
export async function applyQuotaLevel(
  store: Pick<Store, 'unitOfWork'>,
  drain: Drain,
  level: Degradation,
  usage: Usage | undefined,
): Promise<MoveResult | undefined> {
  const event: DrainEvent = level === 'paused' ? 'paused_by_quota' : 'quota_reset';
  // Most drains are where their level wants them: no transaction for those.
  if (!movesBy(drain, event)) return undefined;
  const details = event === 'paused_by_quota' ? { usage } : { reason: 'quota reset' };
  return store.unitOfWork((tx) => moveDrain(tx, drain, event, QUOTA_ACTOR, details));
}
