/**
 * The order in which the scrub pool (scrub-pool.ts) starts its jobs: one
 * queue per organization, served in turn, so one organization's heavy records
 * never wait behind another's. A free worker takes the next job of the
 * organization with the fewest jobs running, and among those the one served
 * longest ago (one not served since its work came, first): an organization
 * with nothing running goes first, so its record waits at most for the jobs
 * already running (each ends within the pool's budget), however many another
 * organization has queued. Within an
 * organization jobs start in the order they came.
 *
 * An organization holds at most `maxQueued` jobs in its queue; past that its
 * jobs wait in its own backlog, in order, and move up as its queue empties.
 * The backlog is that organization's alone: it is never served before
 * another organization's queue, and is not counted as anyone else's work.
 * The record path never fills it: a live record of an organization whose
 * queue is `full` is parked instead (pipeline.ts), so that waiting holds no
 * record read from the source; the backlog pump's scrubs of parked records
 * wait here.
 */

/** Queued heavy jobs per organization, past which its jobs wait in its own backlog. */
export const SCRUB_MAX_QUEUED_PER_ORG = 32;

interface OrgJobs<T> {
  queue: T[];
  backlog: T[];
  running: number;
  /** When it was last served (-1: not since it became active): lower goes first among equals. */
  served: number;
}

export class FairScrubQueue<T> {
  private readonly orgs = new Map<string, OrgJobs<T>>();
  private turn = 0;

  constructor(private readonly maxQueued: number = SCRUB_MAX_QUEUED_PER_ORG) {
    if (!Number.isInteger(maxQueued) || maxQueued < 1) throw new Error(`maxQueued must be a positive integer, not ${maxQueued}`);
  }

  push(orgId: string, job: T): void {
    let org = this.orgs.get(orgId);
    if (!org) this.orgs.set(orgId, (org = { queue: [], backlog: [], running: 0, served: -1 }));
    if (org.queue.length < this.maxQueued && org.backlog.length === 0) org.queue.push(job);
    else org.backlog.push(job);
  }

  /** The next job to start, counted as running for its organization until `finished`; undefined when none waits. */
  take(): { orgId: string; job: T } | undefined {
    let best: [string, OrgJobs<T>] | undefined;
    // Among organizations never served since they became active, the first to come (the map's order).
    for (const entry of this.orgs) {
      const org = entry[1];
      if (org.queue.length === 0) continue;
      if (!best || org.running < best[1].running || (org.running === best[1].running && org.served < best[1].served)) best = entry;
    }
    if (!best) return undefined;
    const [orgId, org] = best;
    const job = org.queue.shift()!;
    if (org.backlog.length > 0) org.queue.push(org.backlog.shift()!);
    org.running++;
    org.served = this.turn++;
    return { orgId, job };
  }

  /** A job `take` gave has ended (done, withheld, or dropped at close). */
  finished(orgId: string): void {
    const org = this.orgs.get(orgId);
    if (!org) return;
    org.running--;
    if (org.running <= 0 && org.queue.length === 0) this.orgs.delete(orgId);
  }

  /** Every job not started, queued and backlogged (the pool's close). */
  drain(): T[] {
    const all: T[] = [];
    for (const org of this.orgs.values()) all.push(...org.queue.splice(0), ...org.backlog.splice(0));
    return all;
  }

  /** Whether the organization's queue holds its cap of jobs not started: another waits in its backlog. */
  full(orgId: string): boolean {
    const org = this.orgs.get(orgId);
    return org !== undefined && org.queue.length >= this.maxQueued;
  }

  /** An organization's jobs not started: in its queue (at most the cap) and in its backlog. */
  waiting(orgId: string): { queued: number; backlogged: number } {
    const org = this.orgs.get(orgId);
    return { queued: org?.queue.length ?? 0, backlogged: org?.backlog.length ?? 0 };
  }
}
