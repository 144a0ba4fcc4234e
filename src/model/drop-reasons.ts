/**
 * Why a record of a drain's organization was not delivered to the drain: one bounded set, shared by
 * the hourly health counters, the read form's 24-hour summary, the page and the metric
 * `logdrain_records_not_delivered_total`. For every drain, over any stretch of time in which every
 * record both arrived and settled:
 *
 *   seen = delivered + sum(dropped by reason) + in flight + parked
 *
 * `seen` counts each record of the drain's organization that reached the drain (routed to it, or
 * dead-lettered while naming that organization), and the drain's own test and heartbeat records
 * once they settle. docs/delivery.md ("Where every record went") is the long form.
 */

/** Failures: records the drain should have had and did not get. Their sum is the hourly `dropped`. */
export const FAILURE_REASONS = ['quota', 'horizon', 'permanent', 'oversize', 'dead_letter'] as const;
/** Left out on purpose by the drain's own configuration: counted apart from the failures. */
export const INTENTIONAL_REASONS = ['sampling', 'selector'] as const;
export const DROP_REASONS = [...FAILURE_REASONS, ...INTENTIONAL_REASONS] as const;

export type FailureReason = (typeof FAILURE_REASONS)[number];
export type DropReason = (typeof DROP_REASONS)[number];
export type DroppedByReason = Record<DropReason, number>;

export const noDrops = (): DroppedByReason => ({ quota: 0, horizon: 0, permanent: 0, oversize: 0, dead_letter: 0, sampling: 0, selector: 0 });

export const isFailureReason = (r: DropReason): r is FailureReason => (FAILURE_REASONS as readonly string[]).includes(r);

/**
 * The reason a `dropped` delivery record's own reason (its `errorClass`) is counted under: the quota
 * ladder's and the horizon's are their own; every other one is a batch the retry policy gave up on
 * (a 4xx other than 408 and 429, a redirect, an SSRF refusal, a test batch whose endpoint moved, an
 * internal error), counted `permanent`.
 */
export function dropReasonOf(reason: string): 'quota' | 'horizon' | 'permanent' {
  return reason === 'quota' || reason === 'horizon' ? reason : 'permanent';
}

/** A dead letter's bounded class (model/record.ts deadLetterClass) as a drop reason. */
export const deadLetterDropReason = (cls: string): 'oversize' | 'dead_letter' => (cls === 'too_large' ? 'oversize' : 'dead_letter');
