/**
 * A read of parked records (one drain, whole resource buckets: the backlog
 * repo's roundRead) cut into batches: records are grouped by resource,
 * keeping their order within each, and every group is cut into full batches
 * under the batch limits. A read ends where a bucket ends, so a resource's
 * records of the round are all in one read and go out whole from it.
 */
import type { DrainPlan } from '../plan/drain-plans.js';
import type { ReadyBatch } from '../batch/batcher.js';
import { SerialisedEntry } from '../encode/encoder.js';
import type { BacklogRow } from '../modules/drains/tables/backlog.js';

/** A batch of parked records and the ids of the backlog records it carries. */
export interface ParkedBatch {
  batch: ReadyBatch;
  rowIds: number[];
}

/** One resource's batches, in order: each waits for the one before it. */
export type ResourceQueue = ParkedBatch[];

export function batchesByResource(plan: DrainPlan, rows: readonly BacklogRow[], limits: { maxRecords: number; maxBytes: number }): ResourceQueue[] {
  const queues = new Map<string, ResourceQueue>();
  for (const row of rows) {
    let queue = queues.get(row.resourceJson);
    if (!queue) queues.set(row.resourceJson, (queue = []));
    let cur = queue[queue.length - 1];
    if (!cur || cur.rowIds.length >= limits.maxRecords || (cur.rowIds.length > 0 && cur.batch.bytes + row.bytes > limits.maxBytes)) {
      cur = {
        batch: { plan, kind: 'batch', resource: JSON.parse(row.resourceJson), resourceJson: row.resourceJson, entries: [], tickets: [], bytes: 0 },
        rowIds: [],
      };
      queue.push(cur);
    }
    // Its JSON as stored, parsed only if read (OTLP and the vendors read the record; JSON and NDJSON splice the text).
    cur.batch.entries.push(new SerialisedEntry(row.recordId, row.recordJson, row.scrubHits));
    cur.batch.bytes += row.bytes;
    cur.rowIds.push(row.id);
  }
  return [...queues.values()];
}
