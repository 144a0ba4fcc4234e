/**
 * Heavy scrubs deferred to the backlog. While an organization has its cap of
 * heavy records queued for the scrub pool (scrub-pool.ts `full`), the record
 * path parks its next heavy records shaped but not yet scrubbed, marked with
 * SCRUB_DEFERRED as their scrub hits, rather than hold them, read from the
 * source, until the pool has room: held, they would count against
 * MAX_IN_FLIGHT_RECORDS and one organization's flood would stop the consumer
 * for every organization. The backlog pump scrubs such a row (through the
 * pool, fairly with everyone's live records) before it sends it; a row is
 * never sent unscrubbed.
 */
import type { DeliveredRecord } from './delivered-record.js';
import { INLINE_SCRUB_WORK, scrubbedTextLength, type Scrubber } from './scrubber.js';
import type { ScrubPool } from './scrub-pool.js';

/** The scrub hits of a parked row whose JSON is not yet scrubbed (real counts are never negative). */
export const SCRUB_DEFERRED = -1;

/** Scrubs a parked record's JSON under `scrubber` (the drain's rules now): off this thread where heavy and a pool is given. */
export async function scrubParkedJson(json: string, scrubber: Scrubber, orgId: string, pool?: ScrubPool): Promise<{ json: string; scrubHits: number }> {
  const record = JSON.parse(json) as DeliveredRecord;
  const heavy = scrubber.cost > 0 && scrubbedTextLength(record) * scrubber.cost > INLINE_SCRUB_WORK;
  const scrubHits = heavy && pool ? await pool.scrub(scrubber, record, orgId) : scrubber.scrubRecord(record);
  return { json: JSON.stringify(record), scrubHits };
}
