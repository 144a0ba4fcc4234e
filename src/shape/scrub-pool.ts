/**
 * Scrubbing off the routing thread, for records whose scrub would be heavy
 * (scrubber.ts, INLINE_SCRUB_WORK): a few worker threads, one record each at
 * a time, under a time budget. A worker past its budget is ended (RE2 cannot
 * be interrupted otherwise) and replaced, and that record is withheld: its
 * body and string attributes replaced by the marker, never sent unscrubbed.
 * The routing thread meanwhile goes on with every other record. Jobs wait in
 * one queue per organization, served in turn (scrub-queue.ts), so one
 * organization's flood of heavy records delays no other's. Past an
 * organization's cap of queued jobs (`full`) the record path parks its heavy
 * records unscrubbed, and the backlog pump scrubs them here before it sends
 * them: a flood never holds the consumer's MAX_IN_FLIGHT_RECORDS budget.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../threads.js';
import type { AttributeValue, DeliveredRecord } from './delivered-record.js';
import { withholdRecord, type Scrubber } from './scrubber.js';
import { FairScrubQueue } from './scrub-queue.js';
import type { ScrubRule } from '../model/drain.js';

export interface ScrubJob {
  id: number;
  rulesKey: string;
  rules: readonly ScrubRule[];
  body: string | undefined;
  attributes: Record<string, AttributeValue>;
}

export interface ScrubDone {
  id: number;
  body: string | undefined;
  attributes: Record<string, AttributeValue>;
  hits: number;
}

export interface ScrubPool {
  /** Scrubs `record` of organization `orgId` in place off this thread; resolves with the matches replaced (or the fields withheld). */
  scrub(scrubber: Scrubber, record: DeliveredRecord, orgId: string): Promise<number>;
  /**
   * Whether the organization has its cap of jobs queued (not started): the record path parks its
   * next heavy records unscrubbed rather than hold them, read from the source, behind its own.
   */
  full(orgId: string): boolean;
  /** An organization's jobs not yet started: in its queue, and past the queue's cap in its own backlog. */
  waiting(orgId: string): { queued: number; backlogged: number };
  /** Records withheld because their scrub overran the budget, since the start. */
  readonly withheld: number;
  close(): Promise<void>;
}

export interface ScrubPoolOptions {
  /** Worker threads (each scrubs one record at a time). */
  size?: number;
  /** The longest one record's scrub may take before it is withheld. */
  budgetMs?: number;
  /** Queued jobs per organization before its jobs wait in its own backlog (scrub-queue.ts). */
  maxQueuedPerOrg?: number;
  onWithheld?: (recordId: string) => void;
  /** Called as a worker is handed a job (the record's id and organization): the order jobs start in. */
  onStart?: (recordId: string, orgId: string) => void;
}

interface Pending {
  orgId: string;
  job: ScrubJob;
  record: DeliveredRecord;
  resolve: (hits: number) => void;
}

interface Slot {
  worker: Worker;
  /** Its modules are loaded (the budget counts scrubbing, not a worker's start). */
  ready: boolean;
  busy?: { pending: Pending; timer: NodeJS.Timeout };
}

/** A scrub worker (threads.ts: the build's JavaScript, or the source through tsx). */
function startWorker(): Worker {
  return startModuleWorker(new URL('./scrub-worker', import.meta.url));
}

export function createScrubPool(opts: ScrubPoolOptions = {}): ScrubPool {
  const size = opts.size ?? 2;
  const budgetMs = opts.budgetMs ?? 2000;
  const queue = new FairScrubQueue<Pending>(opts.maxQueuedPerOrg);
  const slots: Slot[] = [];
  const keys = new WeakMap<Scrubber, string>();
  let nextId = 0;
  let nextKey = 0;
  let withheld = 0;
  let closed = false;

  const spawn = (): Slot => {
    const slot: Slot = { worker: startWorker(), ready: false };
    slot.worker.unref();
    slot.worker.on('message', (done: ScrubDone | 'ready') => {
      if (done === 'ready') {
        slot.ready = true;
        return next(slot);
      }
      const busy = slot.busy;
      if (!busy || busy.pending.job.id !== done.id) return;
      clearTimeout(busy.timer);
      slot.busy = undefined;
      queue.finished(busy.pending.orgId);
      const { record } = busy.pending;
      if (done.body !== undefined) record.body = done.body;
      record.attributes = done.attributes;
      busy.pending.resolve(done.hits);
      next(slot);
    });
    // A worker that dies (not by us) fails nothing: its record is withheld, a new worker takes over.
    slot.worker.on('error', () => replace(slot));
    return slot;
  };

  /** Withholds the record in hand, ends the worker and puts a fresh one in its place. */
  const replace = (slot: Slot): void => {
    const busy = slot.busy;
    slot.busy = undefined;
    if (busy) {
      clearTimeout(busy.timer);
      queue.finished(busy.pending.orgId);
      withheld++;
      opts.onWithheld?.(busy.pending.record.id);
      busy.pending.resolve(withholdRecord(busy.pending.record));
    }
    void slot.worker.terminate();
    if (closed) return;
    const fresh = spawn();
    slots[slots.indexOf(slot)] = fresh;
    next(fresh);
  };

  const next = (slot: Slot): void => {
    if (slot.busy || !slot.ready || closed) return;
    const pending = queue.take()?.job;
    if (!pending) return;
    slot.busy = { pending, timer: setTimeout(() => replace(slot), budgetMs) };
    opts.onStart?.(pending.record.id, pending.orgId);
    slot.worker.postMessage(pending.job);
  };

  return {
    get withheld() {
      return withheld;
    },
    full: (orgId) => queue.full(orgId),
    waiting: (orgId) => queue.waiting(orgId),
    scrub(scrubber, record, orgId) {
      if (closed) return Promise.resolve(withholdRecord(record));
      let rulesKey = keys.get(scrubber);
      if (rulesKey === undefined) keys.set(scrubber, (rulesKey = `r${nextKey++}`));
      return new Promise<number>((resolve) => {
        queue.push(orgId, { orgId, job: { id: nextId++, rulesKey, rules: scrubber.rules, body: record.body, attributes: record.attributes }, record, resolve });
        while (slots.length < size) slots.push(spawn());
        for (const slot of slots) next(slot);
      });
    },
    async close() {
      closed = true;
      for (const p of queue.drain()) p.resolve(withholdRecord(p.record));
      await Promise.all(slots.splice(0).map((s) => {
        if (s.busy) {
          clearTimeout(s.busy.timer);
          s.busy.pending.resolve(withholdRecord(s.busy.pending.record));
        }
        return s.worker.terminate();
      }));
    },
  };
}
