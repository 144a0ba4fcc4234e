/**
 * The backlog pump: drains parked records, in order, for drains that are
 * delivering again (verified, resumed, recovering), one drain at a time per
 * lease across all workers. It reads the backlog resource by resource and
 * sends each resource's records in full batches, a few resources at once
 * (backlog-page.ts); drains batching across time are delivered one round
 * every spill linger (spill.ts). A failing drain is probed with single attempts under
 * exponential backoff; each success removes the delivered rows.
 * Records parked longer than BUFFER_HORIZON_MS are dropped into a `dropped`
 * delivery record (reason `horizon`), whatever the drain's state.
 * Records parked before their heavy scrub (deferred-scrub.ts) are scrubbed
 * here, through the scrub pool, before they are batched.
 */
import pLimit from 'p-limit';
import type { Store } from '../store/store.js';
import type { Accountant } from '../account/accountant.js';
import type { DrainPlan } from '../plan/drain-plans.js';
import type { DrainRegistry } from '../plan/drain-registry.js';
import type { ParkingSet } from './parking.js';
import type { Logger } from '../telemetry/logger.js';
import type { PipelineEvents } from '../telemetry/events.js';
import { createBacklogRepo, type RoundCursor } from '../modules/drains/tables/backlog.js';
import { noteDrainActivity } from '../store/change-epochs.js';
import { createDeliveriesRepo } from '../modules/drains/tables/deliveries.js';
import { createHealthRepo } from '../modules/drains/tables/health.js';
import type { Deliverer } from '../deliver/deliverer.js';
import { droppedEntry, successEntry } from '../account/entries.js';
import { batchesByResource, type ResourceQueue } from './backlog-page.js';
import type { SpillPolicy, SpillRound } from './spill.js';
import { retryPolicy } from '../deliver/retry-policy.js';
import { SCRUB_DEFERRED, scrubParkedJson } from '../shape/deferred-scrub.js';
import type { ScrubPool } from '../shape/scrub-pool.js';
import type { BacklogRow } from '../modules/drains/tables/backlog.js';
import type { DrainCircuits } from '../deliver/circuit.js';

export interface BacklogPumpOptions {
  store: Store;
  registry: DrainRegistry;
  deliverer: Deliverer;
  accountant: Accountant;
  parking: ParkingSet;
  events: PipelineEvents;
  logger: Logger;
  /** This worker's name in drain leases. */
  owner: string;
  pollMs: number;
  horizonMs: number;
  batch: { maxRecords: number; maxBytes: number };
  retry: { baseMs: number; maxMs: number };
  concurrency?: number;
  /** Drains batching across time (spill.ts): delivered one round a spill linger. */
  spill?: SpillPolicy;
  /** Where parked records not yet scrubbed are scrubbed when heavy (without it, on this thread). */
  scrubPool?: ScrubPool;
  /** The drain circuits (deliver/circuit.ts): an open drain waits; a due one is probed with one batch. */
  circuits?: DrainCircuits;
}

export interface BacklogPump {
  start(): void;
  stop(): Promise<void>;
  /** One pass over every drain with a backlog (tests call it directly). */
  runOnce(): Promise<void>;
}

const LEASE_MS = 60_000;
/**
 * Parked records a read holds, about (whole pages), when it gathers several resource buckets. A
 * round holds two reads of each drain it sends (the one being sent and the next, read meanwhile),
 * and four drains are sent at once: at 2,000 records (over a KB of the heap a record, its JSON and
 * its resource's) that was about 16,000 records, some 20 MB of a spilling worker's live heap and
 * twice that of its peak RSS with the heap's growth (benchmarks-engine-findings.md, memory). A read of 1,000
 * still fills 40 batches of 25.
 */
const PAGE_ROWS = 1000;
/**
 * Records of one bucket a read takes whole (backlog repo roundRead): a bucket read in parts sends
 * each of its resources in as many short batches. A round of 10,000 agents spilling 1,000,000
 * records holds tens of records of every agent (a spill linger and the time the round before took
 * to deliver), 5,000 or more a bucket: reads of 1,000 and 3,000 made 17 and 20 records a POST, 8,000
 * made 33 (benchmarks-engine-findings.md, the backlog as pages). A read of 8,000 is about 10 MB of the heap, two
 * of a drain's reads 20 MB; only a drain with that many records in one bucket reads that much.
 */
const BUCKET_ROWS = 8000;
/** Resources of one drain delivered at once (each resource's batches stay in order). */
const LANES = 4;
/**
 * Parked records scrubbed at a time (deferred-scrub.ts): the pool's threads kept busy, and few
 * enough that a chunk of scrubs at the pool's budget ends well within the lease renewed before it.
 */
const SCRUB_CHUNK = 8;

export function createBacklogPump(opts: BacklogPumpOptions): BacklogPump {
  const failures = new Map<string, { attempts: number; nextAt: number }>();
  const limit = pLimit(opts.concurrency ?? 4);
  // Parked already: never parked again, and expired by the time they were parked (expire), not by a horizon here.
  const policy = retryPolicy({ retry: opts.retry, horizonMs: Infinity, parkAfterAttempts: Infinity });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  async function expire(drainId: string): Promise<void> {
    const plan = opts.registry.planFor(drainId);
    if (!plan) return;
    const before = new Date(Date.now() - opts.horizonMs);
    // One transaction: rows leave the backlog only together with the dropped record naming them,
    // so a crash or a lost connection in between cannot make records vanish unaccounted.
    const count = await opts.store.sql.transaction(async (tx) => {
      const { recordIds } = await createBacklogRepo(tx).expire(drainId, before);
      if (recordIds.length === 0) return 0;
      const entry = droppedEntry(plan.drain, recordIds, 'horizon', 0);
      await createDeliveriesRepo(tx).insertMany(entry.deliveries);
      await createHealthRepo(tx).addHourly(entry.hourly);
      return recordIds.length;
    });
    if (count > 0) noteDrainActivity();
    if (count > 0) opts.events.recordsDropped(plan.drain.type, 'horizon', count);
  }

  /**
   * Delivers one page: up to LANES resources at a time, each resource's
   * batches one after the other. A retryable failure stops the page (no new
   * batch starts; the failed resource's later batches stay parked, in order)
   * and sets the drain's backoff; a final failure drops that batch's records
   * with the reason. Records leave the backlog once the accountant has written
   * their delivery or dropped records, all of the read's at once (a page at a
   * time, not a record at a time): a crash in between sends them again, never
   * loses them. The page resolves once that is written, so the next round
   * cannot see them again.
   */
  async function deliverPage(plan: DrainPlan, queues: ResourceQueue[], probe = false): Promise<'done' | 'failing'> {
    const drainId = plan.drain.id;
    const accounted: Promise<void>[] = [];
    /** Ids of the records delivered or dropped, to leave the backlog once accounted. */
    const settled: number[] = [];
    const settle = async (): Promise<void> => {
      await Promise.all(accounted);
      await opts.store.backlog.remove(settled);
    };
    let failing = false;
    let next = 0;
    if (probe && queues[0]?.[0]) {
      // The half-open probe: the page's first batch alone; the rest only once the circuit closed.
      const { batch, rowIds } = queues[0][0];
      const r = await opts.deliverer.attemptOnce(batch, 1);
      const now = Date.now();
      const decided = policy(1, r.outcome, now, batch.kind, now);
      if (decided.action === 'done') {
        failures.delete(drainId);
        accounted.push(opts.accountant.record(successEntry(batch, r)));
        settled.push(...rowIds);
      }
      else if (decided.action === 'drop') {
        const dropped = droppedEntry(plan.drain, batch.entries.map((e) => e.id), decided.reason, 2);
        accounted.push(opts.accountant.record({ deliveries: [r.row, ...dropped.deliveries], hourly: dropped.hourly }));
        settled.push(...rowIds);
        opts.events.recordsDropped(plan.drain.type, decided.reason, rowIds.length);
      } else accounted.push(opts.accountant.record({ deliveries: [r.row] }));
      await opts.circuits?.probed(plan.drain, r.outcome);
      if (decided.action !== 'done' && decided.action !== 'drop') {
        await settle();
        return 'failing';
      }
      queues = [queues[0].slice(1), ...queues.slice(1)];
    }
    const lane = async (): Promise<void> => {
      while (!failing && !stopped && next < queues.length) {
        for (const { batch, rowIds } of queues[next++]!) {
          if (failing || stopped) return;
          const attempt = (failures.get(drainId)?.attempts ?? 0) + 1;
          const r = await opts.deliverer.attemptOnce(batch, attempt);
          const now = Date.now();
          const next = policy(attempt, r.outcome, now, batch.kind, now);
          if (next.action === 'done') {
            failures.delete(drainId);
            accounted.push(opts.accountant.record(successEntry(batch, r)));
            settled.push(...rowIds);
          } else if (next.action === 'drop') {
            // Final for these records (a 4xx, a redirect, an SSRF refusal): dropped with the reason.
            const dropped = droppedEntry(plan.drain, batch.entries.map((e) => e.id), next.reason, attempt + 1);
            accounted.push(opts.accountant.record({ deliveries: [r.row, ...dropped.deliveries], hourly: dropped.hourly }));
            settled.push(...rowIds);
            opts.events.recordsDropped(plan.drain.type, next.reason, rowIds.length);
          } else {
            accounted.push(opts.accountant.record({ deliveries: [r.row] }));
            failures.set(drainId, { attempts: attempt, nextAt: now + (next.action === 'retry' ? next.afterMs : 0) });
            failing = true;
            return;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(LANES, queues.length) }, lane));
    await settle();
    return failing ? 'failing' : 'done';
  }

  /**
   * The page's rows with every deferred scrub done, under the drain's rules now; null when the
   * lease was lost or the pump stops meanwhile. The lease is renewed as the scrubs go on.
   */
  async function scrubDeferred(plan: DrainPlan, rows: readonly BacklogRow[]): Promise<readonly BacklogRow[] | null> {
    if (!rows.some((r) => r.scrubHits === SCRUB_DEFERRED)) return rows;
    const out = rows.slice();
    let leasedAt = Date.now();
    for (let i = 0; i < out.length; i += SCRUB_CHUNK) {
      if (stopped) return null;
      if (Date.now() - leasedAt > LEASE_MS / 4) {
        if (!(await opts.store.backlog.lease(plan.drain.id, opts.owner, LEASE_MS))) return null;
        leasedAt = Date.now();
      }
      await Promise.all(out.slice(i, i + SCRUB_CHUNK).map(async (row, k) => {
        if (row.scrubHits !== SCRUB_DEFERRED) return;
        const { json, scrubHits } = await scrubParkedJson(row.recordJson, plan.scrubber, plan.drain.orgId, opts.scrubPool);
        out[i + k] = { ...row, recordJson: json, scrubHits, bytes: Buffer.byteLength(json) };
      }));
    }
    return out;
  }

  /**
   * One round: every record parked up to page `upTo`, read a few resource
   * buckets at a time (each bucket whole unless it alone is over a read), so
   * each resource goes out in full batches however many interleave in the
   * stream. Answers what it delivered, or null when it stopped early (a
   * failing destination, a lost lease, the pump stopping).
   */
  async function deliverRound(plan: DrainPlan, upTo: number, probe = false): Promise<SpillRound | null> {
    const drainId = plan.drain.id;
    let records = 0;
    let resources = 0;
    const read = (after: RoundCursor | undefined) => {
      const got = opts.store.backlog.roundRead(drainId, upTo, after, PAGE_ROWS, BUCKET_ROWS);
      got.catch(() => {}); // awaited below, unless the round ends first
      return got;
    };
    let reading = read(undefined);
    for (let page = 0; !stopped; page++) {
      // A long backlog takes many reads: keep the lease alive past LEASE_MS.
      if (page > 0 && !(await opts.store.backlog.lease(drainId, opts.owner, LEASE_MS))) return null;
      const { rows, next } = await reading;
      if (rows.length === 0 && next === undefined) return { records, resources };
      // The next read is made while this one is sent (none after the last).
      reading = next ? read(next) : Promise.resolve({ rows: [], next: undefined });
      const scrubbed = await scrubDeferred(plan, rows);
      if (scrubbed === null) return null;
      const queues = batchesByResource(plan, scrubbed, opts.batch);
      resources += queues.length;
      if ((await deliverPage(plan, queues, probe && page === 0)) === 'failing') return null;
      records += rows.length;
    }
    return null;
  }

  async function drain(drainId: string): Promise<void> {
    const plan = opts.registry.planFor(drainId);
    if (!plan) {
      // Deleted (its backlog with it): nothing left to spill.
      opts.spill?.forget(drainId);
      return;
    }
    if (!plan.deliverable) return;
    // An open circuit: nothing is sent until its time is up, then one probe batch (deliverPage).
    const phase = opts.circuits?.phase(drainId) ?? 'closed';
    if (phase === 'wait') return;
    const f = failures.get(drainId);
    if (phase === 'closed' && f && Date.now() < f.nextAt) return;
    // A drain batching across time waits for its round (spill.ts).
    const spill = opts.spill?.isSpilling(drainId) ? opts.spill : undefined;
    if (spill && !spill.roundDue(drainId)) return;
    if (!(await opts.store.backlog.lease(drainId, opts.owner, LEASE_MS))) {
      opts.logger.debug({ event: 'backlog.lease_taken', drainId }, 'another worker holds the backlog lease');
      return;
    }
    opts.logger.debug({ event: 'backlog.drain', drainId, failedAttempts: f?.attempts ?? 0, spilling: spill !== undefined }, 'draining a backlog');
    try {
      // Rounds, each up to the newest row parked when it began: a spilling drain takes one
      // round a spill linger; any other drain takes rounds until its backlog reads empty.
      for (let round = 0; !stopped; round++) {
        if (round > 0 && !(await opts.store.backlog.lease(drainId, opts.owner, LEASE_MS))) return;
        const mark = opts.parking.mark();
        const upTo = await opts.store.backlog.lastId(drainId);
        if (upTo === null) {
          spill?.roundDone(drainId, { records: 0, resources: 0 });
          // Empty: new records of this drain go live again (unless a park is landing right now).
          opts.parking.clear(drainId, mark);
          failures.delete(drainId);
          return;
        }
        // The probe is claimed only with a record to send it with: until one is parked the circuit stays open.
        const probe = round === 0 && phase === 'probe';
        if (probe && !(await opts.circuits!.claimProbe(plan.drain))) return;
        const delivered = await deliverRound(plan, upTo, probe);
        if (delivered === null) return;
        if (spill) {
          spill.roundDone(drainId, delivered);
          return;
        }
      }
    } finally {
      await opts.store.backlog.release(drainId, opts.owner).catch(() => {});
    }
  }

  async function runOnce(): Promise<void> {
    // What other workers opened and closed: their openings hold this worker's live sends too.
    await opts.circuits?.refresh().catch((e) => opts.logger.warn({ event: 'circuit.refresh_failed', err: (e as Error).message }, 'could not read drain circuits'));
    const mark = opts.parking.mark();
    const withBacklog = await opts.store.backlog.drainsWithBacklog();
    opts.parking.reset(withBacklog, mark);
    // A drain resumed or verified a moment ago delivers its parked records this pass, notified or not.
    if (withBacklog.length > 0) await opts.registry.current();
    // A spilling drain whose agents fell quiet has an empty backlog: its next round ends the spill.
    const drains = [...new Set([...withBacklog, ...(opts.spill?.drains() ?? [])])];
    await Promise.all(
      drains.map((drainId) =>
        limit(async () => {
          try {
            await expire(drainId);
            await drain(drainId);
          } catch (e) {
            opts.logger.warn({ event: 'backlog.pump_failed', drainId, err: (e as Error).message }, 'backlog pass failed');
          }
        }),
      ),
    );
  }

  return {
    runOnce,
    start() {
      const tick = () => {
        if (stopped) return;
        running = runOnce()
          .catch((e) => opts.logger.warn({ event: 'backlog.poll_failed', err: (e as Error).message }, 'backlog poll failed'))
          .finally(() => {
            if (!stopped) timer = setTimeout(tick, opts.pollMs);
          });
      };
      timer = setTimeout(tick, opts.pollMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
