/**
 * The backlog pump: drains parked records, in order, for drains that are
 * delivering again (verified, resumed, recovering), one drain at a time per
 * lease across all workers. A failing drain is probed with single attempts
 * under exponential backoff; each success removes the delivered rows.
 * Records parked longer than BUFFER_HORIZON_MS are dropped into a `dropped`
 * delivery record (reason `horizon`), whatever the drain's state.
 */
import pLimit from 'p-limit';
import type { Store } from '../store/store.js';
import type { BacklogRow } from '../store/backlog-repo.js';
import type { Accountant } from '../account/accountant.js';
import type { DrainPlan, DrainRegistry } from '../pipeline/drain-plans.js';
import type { ParkingSet } from '../pipeline/parking.js';
import type { ReadyBatch } from '../batch/batcher.js';
import type { Logger } from '../telemetry/logger.js';
import type { PipelineEvents } from '../telemetry/events.js';
import { droppedEntry, type Deliverer } from './deliverer.js';
import { backoffMs } from './backoff.js';

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
}

export interface BacklogPump {
  start(): void;
  stop(): Promise<void>;
  /** One pass over every drain with a backlog (tests call it directly). */
  runOnce(): Promise<void>;
}

const LEASE_MS = 60_000;

export function createBacklogPump(opts: BacklogPumpOptions): BacklogPump {
  const failures = new Map<string, { attempts: number; nextAt: number }>();
  const limit = pLimit(opts.concurrency ?? 4);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  async function expire(drainId: string): Promise<void> {
    const plan = opts.registry.planFor(drainId);
    const gone = await opts.store.backlog.expire(drainId, new Date(Date.now() - opts.horizonMs));
    if (gone.count === 0 || !plan) return;
    await opts.accountant.record(droppedEntry(plan.drain, gone.count, 'horizon', 0, gone.firstRecordId, gone.lastRecordId));
    opts.events.recordsDropped(plan.drain.type, 'horizon', gone.count);
  }

  /** Consecutive rows of one resource, under the batch limits. */
  function toBatches(plan: DrainPlan, rows: BacklogRow[]): { batch: ReadyBatch; ids: number[] }[] {
    const out: { batch: ReadyBatch; ids: number[] }[] = [];
    let cur: { batch: ReadyBatch; ids: number[] } | undefined;
    for (const row of rows) {
      if (!cur || cur.batch.resourceJson !== row.resourceJson || cur.batch.bytes + row.bytes > opts.batch.maxBytes || cur.ids.length >= opts.batch.maxRecords) {
        cur = {
          batch: { plan, kind: 'batch', resource: JSON.parse(row.resourceJson), resourceJson: row.resourceJson, entries: [], tickets: [], bytes: 0 },
          ids: [],
        };
        out.push(cur);
      }
      cur.batch.entries.push({ record: JSON.parse(row.recordJson), json: row.recordJson, scrubHits: row.scrubHits });
      cur.batch.bytes += row.bytes;
      cur.ids.push(row.id);
    }
    return out;
  }

  async function drain(drainId: string): Promise<void> {
    const plan = opts.registry.planFor(drainId);
    if (!plan || !plan.deliverable) return;
    const f = failures.get(drainId);
    if (f && Date.now() < f.nextAt) return;
    if (!(await opts.store.backlog.lease(drainId, opts.owner, LEASE_MS))) return;
    try {
      for (;;) {
        if (stopped) return;
        const rows = await opts.store.backlog.oldest(drainId, opts.batch.maxRecords);
        if (rows.length === 0) {
          // Empty: new records of this drain go live again.
          opts.parking.delete(drainId);
          failures.delete(drainId);
          return;
        }
        for (const { batch, ids } of toBatches(plan, rows)) {
          const attempt = (failures.get(drainId)?.attempts ?? 0) + 1;
          const r = await opts.deliverer.deliverOnce(batch, attempt);
          if (r.outcome.status === 'success') {
            await opts.store.backlog.remove(ids);
            failures.delete(drainId);
            continue;
          }
          if (r.outcome.status === 'failure') {
            // Final for these records (a 4xx, a redirect, an SSRF refusal): drop them with the reason.
            await opts.accountant.record(droppedEntry(plan.drain, ids.length, r.outcome.errorClass, attempt + 1, batch.entries[0]?.record.id, batch.entries[batch.entries.length - 1]?.record.id));
            await opts.store.backlog.remove(ids);
            opts.events.recordsDropped(plan.drain.type, r.outcome.errorClass, ids.length);
            continue;
          }
          const wait = backoffMs(attempt, opts.retry, r.outcome.retryAfterMs);
          failures.set(drainId, { attempts: attempt, nextAt: Date.now() + wait });
          return;
        }
      }
    } finally {
      await opts.store.backlog.release(drainId, opts.owner).catch(() => {});
    }
  }

  async function runOnce(): Promise<void> {
    const drains = await opts.store.backlog.drainsWithBacklog();
    opts.parking.reset(drains.map((d) => d.drainId));
    await Promise.all(
      drains.map((d) =>
        limit(async () => {
          try {
            await expire(d.drainId);
            await drain(d.drainId);
          } catch (e) {
            opts.logger.warn({ event: 'backlog.pump_failed', drainId: d.drainId, err: (e as Error).message }, 'backlog pass failed');
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
