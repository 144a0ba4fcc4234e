/**
 * The replay runner: sends a time window of the platform copy (agent_logs) again through a drain
 * as the drain is configured now (its plan: selectors, sampling, the quota ladder, shape,
 * redaction, scrub rules, format, signing), as ordinary batches of kind `replay` with new batch
 * ids and the records' own ids, each carrying `Logdrain-Replay: <replayId>`.
 *
 * A worker claims a replay for a lease (modules/drains/tables/replays.ts) and reads its window a page at a
 * time in the key's order (ts, id). After each page it records the position reached, with the
 * lease renewed in the same conditional write, and renews the lease before each attempt. A write
 * answering false (the lease lost, the replay cancelled) stops the replay before another batch
 * goes out. A stopping worker ends the page it is sending, records it
 * and gives the lease back, so the next worker resumes after it; a dead worker's page in flight is
 * sent again once its lease has passed (at least once, as every delivery).
 *
 * Live records go first: a replay sends one batch at a time, takes a page only while the drain
 * delivers live (not parked, no backlog waiting) and sends a batch only while none of the drain's
 * live batches waits for one of its slots; its attempts take the drain's own slots (lanes.ts), and
 * its deliveries count against the drain's daily quota as live ones do. The worker's thread goes to
 * live records first too: while they flow, replays take turns a page at a time and use at most a
 * share of the worker's time (replay-pacing.ts).
 */
import type { Store } from '../store/store.js';
import type { Accountant } from '../account/accountant.js';
import type { DrainPlan } from '../plan/drain-plans.js';
import type { DrainRegistry } from '../plan/drain-registry.js';
import type { ReadyBatch } from '../batch/batcher.js';
import type { Deliverer } from '../deliver/deliverer.js';
import type { ParkingSet } from './parking.js';
import type { Logger } from '../telemetry/logger.js';
import type { LogRow } from '../modules/logs/repository.js';
import type { Replay } from '../modules/drains/tables/replays.js';
import type { AgentRecord } from '../model/record.js';
import type { Environment, Severity } from '../model/drain.js';
import type { ScrubPool } from '../shape/scrub-pool.js';
import type { ReplayPacer } from './replay-pacing.js';
import { SELECTED } from '../select/selector.js';
import { admits } from '../model/quota-ladder.js';
import { shapeRecord } from '../shape/delivered-record.js';
import { INLINE_SCRUB_WORK, scrubbedTextLength } from '../shape/scrubber.js';
import { SerialisedEntry } from '../encode/encoder.js';
import { buildResource, resourceKey } from '../model/resource.js';
import { successEntry } from '../account/entries.js';
import { retryPolicy } from '../deliver/retry-policy.js';

export interface ReplayRunnerOptions {
  store: Store;
  registry: DrainRegistry;
  deliverer: Deliverer;
  accountant: Accountant;
  parking: ParkingSet;
  logger: Logger;
  /** This worker's name in replay leases. */
  owner: string;
  pollMs: number;
  leaseMs: number;
  batch: { maxRecords: number; maxBytes: number };
  retry: { baseMs: number; maxMs: number };
  region?: string | undefined;
  /** Where records too heavy to scrub on this thread are scrubbed (without it, inline). */
  scrubPool?: ScrubPool;
  /** Paces the replays' pages by live traffic (replay-pacing.ts). */
  pacer: ReplayPacer;
  /** Records read a page (a test makes it small to see several pages). */
  pageRows?: number;
}

export interface ReplayRunner {
  start(): void;
  /** Ends each running replay's page, records it, gives the leases back. */
  stop(): Promise<void>;
  /** One claim pass (tests call it directly). */
  runOnce(): Promise<void>;
}

/** Records read a page: a few batches' worth, so a stopping worker's last page ends soon. */
export const REPLAY_PAGE_ROWS = 1000;
/** Replays one worker runs at once. */
const MAX_RUNNING = 4;
/** Attempts of one replay batch before the replay fails: a destination failing this long is not taking a replay. */
export const REPLAY_MAX_ATTEMPTS = 8;
/** The window's records are counted up to this many (the count is progress, not a bound). */
const COUNT_CAP = 10_000_000;
/** How long a replay waits before looking again at a drain not taking it (paused, parked, busy). */
const WAIT_MS = 25;

type Stop = 'lost' | 'stopping';

export function createReplayRunner(opts: ReplayRunnerOptions): ReplayRunner {
  const running = new Map<string, Promise<void>>();
  const pageRows = opts.pageRows ?? REPLAY_PAGE_ROWS;
  // Never parked (a replay's records are in the platform copy already) and no horizon: a replay's
  // retries end at REPLAY_MAX_ATTEMPTS.
  const policy = retryPolicy({ retry: opts.retry, horizonMs: Infinity, parkAfterAttempts: Infinity });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> | undefined;
  const sleepers = new Set<() => void>();

  /** A wait cut short when the runner stops. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      sleepers.add(done);
    });

  async function run(replay: Replay): Promise<void> {
    const { id } = replay;
    const lease = new Lease(opts, id);
    try {
      const end = await pages(replay, lease);
      if (end === 'lost') opts.logger.info({ event: 'replay.stopped', replayId: id, drainId: replay.drainId }, 'replay cancelled or its lease lost');
    } catch (e) {
      opts.logger.warn({ event: 'replay.failed', replayId: id, err: (e as Error).message }, 'replay page failed; another pass resumes it');
    } finally {
      // Given back: resumed from the recorded position by this worker's next pass or another's.
      await opts.store.replays.release(id, opts.owner).catch(() => {});
    }
  }

  /** The replay's pages from its recorded position, until it ends or stops. */
  async function pages(replay: Replay, lease: Lease): Promise<Stop | 'ended'> {
    let position = replay.position;
    if (replay.recordsTotal === null) {
      const total = await opts.store.logs.countUpTo({ orgId: replay.orgId, since: replay.since, until: replay.until }, COUNT_CAP);
      if (!(await opts.store.replays.setTotal(replay.id, opts.owner, total))) return 'lost';
    }
    for (;;) {
      if (stopped) return 'stopping';
      await opts.registry.current();
      const plan = opts.registry.planFor(replay.drainId);
      if (!plan) {
        await opts.store.replays.finish(replay.id, opts.owner, 'failed', 'drain_deleted');
        return 'ended';
      }
      // Live first: a drain not delivering (paused, unverified, failing into its backlog) or with
      // parked records to send takes no replay page now.
      if (!plan.deliverable || opts.parking.has(plan.drain.id)) {
        if (!(await lease.keep())) return 'lost';
        await sleep(Math.max(WAIT_MS, Math.min(opts.pollMs, opts.leaseMs / 4)));
        continue;
      }
      // The worker's time goes to live records first: while they flow, the page waits its turn.
      const wait = opts.pacer.take();
      if (wait > 0) {
        if (!(await lease.keep())) return 'lost';
        await sleep(wait);
        continue;
      }
      const page = new PageClock();
      let outcome: Stop | 'ended' | 'more';
      try {
        outcome = await onePage(replay, plan, lease, position, page);
      } finally {
        opts.pacer.pageDone(page.busyMs());
      }
      if (outcome !== 'more') return outcome;
      position = page.position ?? position;
    }
  }

  /** One page read, sent and recorded; `page.position` is where the next one starts. */
  async function onePage(replay: Replay, plan: DrainPlan, lease: Lease, from: Replay['position'], page: PageClock): Promise<Stop | 'ended' | 'more'> {
    const rows = await opts.store.logs.replayPage(replay.orgId, replay.since, replay.until, from, pageRows);
    if (rows.length === 0) {
      const finished = await opts.store.replays.finish(replay.id, opts.owner, 'completed');
      if (finished) opts.logger.info({ event: 'replay.completed', replayId: replay.id, drainId: replay.drainId }, 'replay completed');
      return finished ? 'ended' : 'lost';
    }
    const batches = await batchesOf(plan, replay.id, rows);
    let sent = 0;
    for (const batch of batches) {
      const outcome = await send(plan, batch, lease, page);
      if (outcome === 'lost') return 'lost';
      if (outcome !== 'sent') {
        await opts.store.replays.finish(replay.id, opts.owner, 'failed', outcome.failed);
        opts.logger.warn({ event: 'replay.failed', replayId: replay.id, drainId: replay.drainId, reason: outcome.failed }, 'replay failed');
        return 'ended';
      }
      sent += batch.entries.length;
    }
    const last = rows[rows.length - 1]!;
    page.position = { ts: last.tsText, id: last.id };
    if (!(await lease.advance({ position: page.position, read: rows.length, sent, batches: batches.length }))) return 'lost';
    return 'more'; // after a short page the next read finds nothing and completes the replay
  }

  /** One batch sent: retried under the drain's backoff, accounted; a final refusal fails the replay. */
  async function send(plan: DrainPlan, batch: ReadyBatch, lease: Lease, page: PageClock): Promise<'sent' | 'lost' | { failed: string }> {
    const drainId = plan.drain.id;
    for (let attempt = 1; ; attempt++) {
      // The drain's live batches waiting for a slot go first.
      while (opts.deliverer.waitingFor(drainId) > 0) {
        if (!(await lease.keep())) return 'lost';
        await page.idle(sleep(WAIT_MS));
      }
      // Renewed before every attempt, not only when due: a cancel stops the replay before its next batch.
      if (!(await lease.keep(true))) return 'lost';
      const r = await opts.deliverer.attemptOnce(batch, attempt);
      const next = policy(attempt, r.outcome, 0, 'replay');
      if (next.action === 'done') {
        await opts.accountant.record(successEntry(batch, r));
        return 'sent';
      }
      await opts.accountant.record({ deliveries: [r.row] });
      if (next.action !== 'retry') return { failed: `destination refused a batch: ${r.row.errorClass ?? 'error'}${r.row.statusCode ? ` (${r.row.statusCode})` : ''}` };
      if (attempt >= REPLAY_MAX_ATTEMPTS) return { failed: `destination failing: ${r.row.errorClass ?? 'error'} after ${attempt} attempts` };
      if (stopped) return 'lost';
      await page.idle(sleep(next.afterMs));
      if (stopped) return 'lost';
    }
  }

  /** The page's records the plan takes now, shaped, scrubbed and cut into batches by resource. */
  async function batchesOf(plan: DrainPlan, replayId: string, rows: readonly LogRow[]): Promise<ReadyBatch[]> {
    const observed = new Date().toISOString();
    const degradation = opts.registry.degradationOf(plan.drain.id);
    const open = new Map<string, ReadyBatch>();
    const out: ReadyBatch[] = [];
    for (const row of rows) {
      const record = recordOf(row);
      if (plan.select(record) !== SELECTED || !admits(degradation, record.severity)) continue;
      const shaped = shapeRecord(record, observed, plan.shape);
      const heavy = opts.scrubPool !== undefined && plan.scrubber.cost > 0 && scrubbedTextLength(record) * plan.scrubber.cost > INLINE_SCRUB_WORK;
      const hits = heavy ? await opts.scrubPool!.scrub(plan.scrubber, shaped, record.orgId) : plan.scrubber.scrubRecord(shaped);
      const json = JSON.stringify(shaped);
      const bytes = Buffer.byteLength(json);
      const key = resourceKey(record);
      let batch = open.get(key);
      if (batch && (batch.entries.length >= opts.batch.maxRecords || batch.bytes + bytes > opts.batch.maxBytes)) batch = undefined;
      if (!batch) {
        const resource = buildResource(record, opts.region);
        batch = { plan, kind: 'replay', replayId, resource, resourceJson: JSON.stringify(resource), entries: [], tickets: [], bytes: 0 };
        open.set(key, batch);
        out.push(batch);
      }
      batch.entries.push(new SerialisedEntry(record.id, json, hits));
      batch.bytes += bytes;
    }
    return out;
  }

  async function runOnce(): Promise<void> {
    if (stopped) return;
    const claimed = await opts.store.replays.claim(opts.owner, opts.leaseMs, MAX_RUNNING - running.size, [...running.keys()]);
    for (const replay of claimed) {
      opts.logger.info({ event: 'replay.claimed', replayId: replay.id, drainId: replay.drainId, resumedAfter: replay.position?.id ?? null }, 'replay claimed');
      const p = run(replay).finally(() => running.delete(replay.id));
      running.set(replay.id, p);
    }
  }

  return {
    runOnce,
    start() {
      const tick = () => {
        if (stopped) return;
        polling = runOnce()
          .catch((e) => opts.logger.warn({ event: 'replay.poll_failed', err: (e as Error).message }, 'replay poll failed'))
          .finally(() => {
            if (!stopped) timer = setTimeout(tick, opts.pollMs);
          });
      };
      timer = setTimeout(tick, 0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const wake of [...sleepers]) wake();
      await polling;
      await Promise.all(running.values());
    },
  };
}

/** A page's time, less its waits (for a slot, a retry's backoff): what the replay kept the worker busy. */
class PageClock {
  private readonly startedAt = performance.now();
  private idleMs = 0;
  /** Where the page ended, once recorded. */
  position: Replay['position'] = null;

  async idle(wait: Promise<void>): Promise<void> {
    const from = performance.now();
    await wait;
    this.idleMs += performance.now() - from;
  }

  busyMs(): number {
    return performance.now() - this.startedAt - this.idleMs;
  }
}

/** The replay's hold on its row: renewed when a third of it has passed, and with each page recorded. */
class Lease {
  private renewedAt = Date.now();
  constructor(private readonly opts: ReplayRunnerOptions, private readonly id: string) {}

  /** Renews the lease when a third of it has passed (`now`: at once); false when it is no longer this worker's or the replay no longer runs. */
  async keep(now = false): Promise<boolean> {
    if (!now && Date.now() - this.renewedAt < this.opts.leaseMs / 3) return true;
    const ok = await this.opts.store.replays.renew(this.id, this.opts.owner, this.opts.leaseMs);
    if (ok) this.renewedAt = Date.now();
    return ok;
  }

  async advance(p: Parameters<Store['replays']['advance']>[3]): Promise<boolean> {
    const ok = await this.opts.store.replays.advance(this.id, this.opts.owner, this.opts.leaseMs, p);
    if (ok) this.renewedAt = Date.now();
    return ok;
  }
}

/** A stored record as the pipeline decoded it: absent fields left out, the time in its ISO form. */
export function recordOf(row: LogRow): AgentRecord {
  const r: AgentRecord = {
    id: row.id,
    orgId: row.orgId,
    agentId: row.agentId,
    agentName: row.agentName,
    environment: row.environment as Environment,
    source: row.source,
    event: row.event,
    severity: row.severity as Severity,
    timestamp: row.ts.toISOString(),
    executionId: row.executionId,
  };
  if (row.agentVersion !== null) r.agentVersion = row.agentVersion;
  if (row.message !== null) r.message = row.message;
  if (row.traceId !== null) r.traceId = row.traceId;
  if (row.spanId !== null) r.spanId = row.spanId;
  if (row.attributes !== null) r.attributes = row.attributes as Record<string, string | number | boolean>;
  return r;
}
