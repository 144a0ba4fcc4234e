/**
 * A page of parked rows (one drain, oldest first) cut into batches: rows are
 * grouped by resource, keeping their order within each, and every group is
 * cut into full batches under the batch limits. Parked records of thousands
 * of agents come interleaved; cutting at each change of resource, as they
 * come, made batches of one or two records.
 */
import type { DrainPlan } from '../pipeline/drain-plans.js';
import type { ReadyBatch } from '../batch/batcher.js';
import type { BacklogRow } from '../store/backlog-repo.js';

/** A batch of parked records and the backlog rows it carries. */
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
    cur.batch.entries.push({ record: JSON.parse(row.recordJson), json: row.recordJson, scrubHits: row.scrubHits });
    cur.batch.bytes += row.bytes;
    cur.rowIds.push(row.id);
  }
  return [...queues.values()];
}
