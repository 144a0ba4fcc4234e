/**
 * A page of parked rows (one drain, read resource by resource) cut into
 * batches: rows are grouped by resource, keeping their order within each,
 * and every group is cut into full batches under the batch limits. A full
 * page ends at a resource boundary (pageCut), so a resource whose rows run
 * on into the next page is sent whole from there rather than as a short
 * batch here and the rest later.
 */
import type { DrainPlan } from '../plan/drain-plans.js';
import type { ReadyBatch } from '../batch/batcher.js';
import { SerialisedEntry } from '../encode/encoder.js';
import type { BacklogRow, ResourceCursor } from '../modules/drains/tables/backlog.js';

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
    // Its JSON as stored, parsed only if read (OTLP and the vendors read the record; JSON and NDJSON splice the text).
    cur.batch.entries.push(new SerialisedEntry(row.recordId, row.recordJson, row.scrubHits));
    cur.batch.bytes += row.bytes;
    cur.rowIds.push(row.id);
  }
  return [...queues.values()];
}

/**
 * What of a page read resource by resource to deliver now, and where the next
 * page starts: a full page (`full`) holding more than one resource leaves its
 * last resource's rows for the next page, which then starts with them.
 */
export function pageCut(rows: readonly BacklogRow[], full: boolean): { deliver: readonly BacklogRow[]; next: ResourceCursor | undefined } {
  let end = rows.length;
  const last = rows[end - 1];
  if (last === undefined) return { deliver: rows, next: undefined };
  if (full && rows[0]!.resourceKey !== last.resourceKey) {
    while (rows[end - 1]!.resourceKey === last.resourceKey) end--;
  }
  const tail = rows[end - 1]!;
  return { deliver: end === rows.length ? rows : rows.slice(0, end), next: { resourceKey: tail.resourceKey, id: tail.id } };
}
