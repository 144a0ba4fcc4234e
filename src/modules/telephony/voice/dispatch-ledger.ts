/**
 * The dispatch budget of an agent (contract telephony T3.4): a dispatch is
 * refused when 100 dispatches of that agent were answered in the preceding 60
 * seconds, a sliding window shared by every API process of the store. A
 * dispatch reserves its place before the call is placed (so concurrent ones
 * cannot all take the last place) and keeps it only when answered; a failed
 * call gives it back, and a place of a process that died frees itself when it
 * leaves the window. Reservations of one agent are serialized by an advisory
 * lock held only for the reservation's few statements, never over the call.
 */
import { newId } from '../../../model/ids.js';
import type { Sql } from '../../../store/sql.js';
import { dispatchPlacesRepo } from './repository.js';

export const DISPATCH_WINDOW_MS = 60_000;

export type Reservation = { placeId: string } | { retryAfterSeconds: number };

export function dispatchLedger(sql: Sql, limit: number) {
  return {
    async reserve(agentId: string, nowMs = Date.now()): Promise<Reservation> {
      return sql.transaction(async (tx) => {
        const places = dispatchPlacesRepo(tx);
        await places.lockAgent(agentId);
        await places.dropUntil(agentId, nowMs - DISPATCH_WINDOW_MS);
        const taken = await places.times(agentId);
        if (taken.length >= limit) {
          // The place that frees first: when the oldest of the ones over the limit leaves the window.
          const frees = Number(taken[taken.length - limit]!.at) + DISPATCH_WINDOW_MS;
          return { retryAfterSeconds: Math.max(1, Math.ceil((frees - nowMs) / 1000)) };
        }
        const placeId = newId();
        await places.insert(placeId, agentId, nowMs);
        return { placeId };
      });
    },
    /** The dispatch was answered: its place counts from the answer. */
    async answered(placeId: string, nowMs = Date.now()): Promise<void> {
      await dispatchPlacesRepo(sql).answered(placeId, nowMs);
    },
    /** The call was not placed: the place is given back. */
    async release(placeId: string): Promise<void> {
      await dispatchPlacesRepo(sql).remove(placeId);
    },
  };
}

export type DispatchLedger = ReturnType<typeof dispatchLedger>;
