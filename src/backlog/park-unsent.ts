/**
 * What happens to a drain's live batches not yet sent when it starts spilling
 * (spill.ts). A drain spills because its batches are small, and by the time
 * that shows (a window of live batches), a second or so of its records has
 * gone into batches of a record or two: thousands of them queued for the
 * drain's few concurrency slots, each paying a whole POST. Instead they are
 * taken back (the deliverer's queue, the batcher's open batches) and parked,
 * to go out with the rest in the drain's rounds.
 *
 * Order: within a resource, the queued batches are older than the batch whose
 * closing started the spill, which is older than the open one; all are older
 * than any record routed after (parked from now, since the drain is held).
 * They go to the accountant in that order, now, before the routing that
 * follows hands it anything, and the accountant writes backlog rows in the
 * order it was given them; rounds read each resource in that order. Batches
 * already being sent are left to finish.
 */
import type { ReadyBatch } from '../batch/batcher.js';
import type { Accountant } from '../account/accountant.js';
import { parkedRecords } from '../account/entries.js';
import type { Logger } from '../telemetry/logger.js';
import { releaseAll } from '../model/ticket.js';
import type { ParkingSet } from './parking.js';

export interface SpillStartDeps {
  accountant: Accountant;
  parking: ParkingSet;
  logger: Logger;
}

/** Parks the drain's unsent batches, oldest first; each batch's tickets are released once its rows are written. */
export function parkUnsent(drainId: string, batches: readonly ReadyBatch[], deps: SpillStartDeps): void {
  const rows = batches.flatMap(parkedRecords);
  if (rows.length === 0) return;
  const landed = deps.parking.parking(drainId);
  deps.logger.info({ event: 'drain.spill_parked_unsent', drainId, batches: batches.length, records: rows.length }, 'parked the small batches not yet sent');
  void deps.accountant.record({ backlog: rows }).then(() => {
    landed();
    for (const b of batches) releaseAll(b.tickets);
  });
}
