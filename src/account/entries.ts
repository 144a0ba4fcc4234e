/**
 * The accounting entries a delivery ends in, built in one place: a success's
 * row with its hourly counts and quota usage, a deliberate drop's `dropped`
 * row naming every record it dropped, and the backlog rows of parked records.
 */
import type { ReadyBatch } from '../batch/batcher.js';
import { DELIVERY_RETENTION_MS, type AttemptOutcome, type DeliveryRecord } from '../model/delivery.js';
import { newId } from '../model/ids.js';
import { dayOf, hourOf } from '../model/time.js';
import type { ParkedRecord } from '../modules/drains/tables/backlog.js';
import { bucketOf } from '../modules/drains/tables/backlog-pages.js';
import type { HourlyIncrement } from '../modules/drains/tables/health.js';
import { dropReasonOf } from '../model/drop-reasons.js';
import type { AccountingEntry } from './accountant.js';

/** One attempt as the deliverer answers it: its outcome and its delivery row. */
export interface AttemptResult {
  outcome: AttemptOutcome;
  row: DeliveryRecord;
}

/** The batch's records as backlog rows, in batch order. */
export function parkedRecords(batch: ReadyBatch): ParkedRecord[] {
  const drain = batch.plan.drain;
  const bucket = bucketOf(batch.resourceJson);
  return batch.entries.map((e) => {
    // A settled entry's JSON is parked as its bytes, never decoded to a string to be encoded again.
    const recordJson = e.utf8 ?? e.json;
    return {
      drainId: drain.id, orgId: drain.orgId, resourceJson: batch.resourceJson, bucket, recordJson, recordId: e.id,
      bytes: typeof recordJson === 'string' ? Buffer.byteLength(recordJson) : recordJson.length, scrubHits: e.scrubHits,
    };
  });
}

/**
 * Whether a batch's records are the drain's own (a test or a heartbeat): they reach the drain when
 * they settle, so they count in its `seen` then; the organization's records counted theirs when routed.
 */
const ownRecords = (kind: ReadyBatch['kind']): boolean => kind !== 'batch';

/** What a successful attempt accounts: its row, the hourly counts, the quota usage. */
export function successEntry(batch: ReadyBatch, r: AttemptResult): AccountingEntry {
  const drainId = batch.plan.drain.id;
  const at = r.row.startedAt.getTime();
  const rejected = r.outcome.status === 'success' ? r.outcome.rejected : 0;
  const delivered = batch.entries.length;
  return {
    deliveries: [r.row],
    hourly: [{ drainId, h: hourOf(at), delivered, dropped: 0, rejected, seen: ownRecords(batch.kind) ? delivered : 0 }],
    usage: [{ drainId, day: dayOf(at), events: delivered, bytes: r.row.bytes ?? 0 }],
  };
}

/**
 * A `dropped` delivery record and its hourly count: how deliberately dropped records are accounted.
 * It names every dropped record's id, so each record can be shown delivered or dropped with a reason;
 * the row keeps the reason as given (an error class, `quota`, `horizon`), the hourly counts its
 * bounded reason (model/drop-reasons.ts). `own`: the drain's own records (a test batch), counted seen now.
 */
export function droppedEntry(
  drain: { id: string; orgId: string },
  recordIds: readonly string[],
  reason: string,
  attempt: number,
  now = new Date(),
  own = false,
) {
  const count = recordIds.length;
  return {
    deliveries: [{
      id: newId(), orgId: drain.orgId, drainId: drain.id, batchId: newId(), kind: 'dropped' as const, attempt,
      recordCount: count, ok: false, errorClass: reason, startedAt: now,
      expiresAt: new Date(now.getTime() + DELIVERY_RETENTION_MS), firstRecordId: recordIds[0], lastRecordId: recordIds[count - 1],
      recordIds,
    }],
    hourly: [{
      drainId: drain.id, h: hourOf(now.getTime()), delivered: 0, dropped: count, rejected: 0,
      seen: own ? count : 0, droppedBy: { [dropReasonOf(reason)]: count },
    }] satisfies HourlyIncrement[],
  };
}

/**
 * The hourly counts of records reaching a drain: `seen` each of them, and those that end here without
 * a delivery record of their own by reason: the drain's selectors or sampling left them out, or they
 * were dead letters naming its organization. Only the failures (oversize, dead_letter) count in `dropped`.
 */
export function reachedEntry(drainId: string, seen: number, by: Partial<Record<'selector' | 'sampling' | 'oversize' | 'dead_letter', number>>, nowMs = Date.now()): HourlyIncrement {
  const dropped = (by.oversize ?? 0) + (by.dead_letter ?? 0);
  return { drainId, h: hourOf(nowMs), delivered: 0, dropped, rejected: 0, seen, droppedBy: by };
}
