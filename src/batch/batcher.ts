/**
 * Groups shaped records into open batches, one per (drain plan, resource),
 * and hands a batch on when it reaches BATCH_MAX_RECORDS or BATCH_MAX_BYTES
 * (bytes of record JSON, before compression) or has been open
 * BATCH_LINGER_MS. A batch never holds two resources.
 */
import type { AgentRecord } from '../model/record.js';
import type { Ticket } from '../model/ticket.js';
import { SerialisedEntry, type BatchEntry } from '../encode/encoder.js';
import type { DrainPlan } from '../plan/drain-plans.js';
import { buildResource, type Resource } from '../model/resource.js';

export interface ReadyBatch {
  plan: DrainPlan;
  kind: 'batch' | 'test' | 'heartbeat' | 'replay';
  /** A replay's batch: the replay it belongs to, sent in the `Logdrain-Replay` header. */
  replayId?: string;
  resource: Resource;
  resourceJson: string;
  entries: BatchEntry[];
  /** One per entry: released when the entry is accounted for. */
  tickets: Ticket[];
  bytes: number;
  /** Batch id of the first attempt, when the caller already announced one (the test route). */
  batchId?: string;
  /**
   * Asked before each retry of a service batch: false once the drain's destination changed since
   * the batch was made (a test batch is never retried to an endpoint the drain has left).
   */
  stillCurrent?: () => Promise<boolean>;
}

export interface BatcherOptions {
  maxRecords: number;
  maxBytes: number;
  lingerMs: number;
  region?: string | undefined;
  onReady: (batch: ReadyBatch) => void;
  /**
   * Whether the drain still takes records live. A batch closing hands control to `onReady`,
   * which may park the drain (a spill starting takes its batches back, `takeOpen`): the record
   * whose arrival closed the batch is then refused, for the caller to park behind them.
   */
  takesLive?: (drainId: string) => boolean;
}

interface OpenBatch extends ReadyBatch {
  timer: NodeJS.Timeout | undefined;
  byResource: Map<string, OpenBatch>;
  resourceKey: string;
}

/** A record routed to drains: its source, its resource's key, and the shaped entry with its JSON's UTF-8 length. */
export interface RoutedRecord {
  source: AgentRecord;
  resourceKey: string;
  entry: BatchEntry;
  /** UTF-8 length of `entry.json`: what a batch of an encoder that reads the JSON is measured by. */
  readonly bytes: number;
  /** The record's size as consumed, which measures batches of encoders that never read the JSON (absent: `bytes`). */
  readonly consumedBytes?: number;
}

/** A routed record whose JSON (and so its length) is made only when a drain's encoder or the backlog needs it. */
export class LazyRoutedRecord implements RoutedRecord {
  private size: number | undefined;
  constructor(
    readonly source: AgentRecord,
    readonly resourceKey: string,
    readonly entry: BatchEntry,
    readonly consumedBytes: number,
  ) {}

  get bytes(): number {
    return (this.size ??= this.entry instanceof SerialisedEntry ? this.entry.byteLength : Buffer.byteLength(this.entry.json));
  }
}

export interface Batcher {
  /**
   * Adds a routed record to the plan's open batch for the record's resource.
   * One RoutedRecord (and its entry) may be added for several plans: entries
   * are never modified after shaping. False: not added, the drain stopped
   * taking records live as a full batch closed (`takesLive`); the caller parks it.
   */
  add(plan: DrainPlan, routed: RoutedRecord, ticket: Ticket): boolean;
  flushAll(): void;
  /**
   * Hands on the fullest open batches until at least half the records in open batches are on their
   * way (all of them when there are more than FULLEST_FIRST_MAX_OPEN open batches). For the
   * in-flight cap: what it sends frees capacity as it is accounted, and the batches left open keep
   * filling meanwhile instead of going out at a fraction of their size.
   */
  flushFullest(): void;
  /** Takes the drain's open batches away, oldest first, unsent: the caller parks their records. */
  takeOpen(drainId: string): ReadyBatch[];
  readonly openBatches: number;
}

/**
 * Open batches beyond which flushFullest sends them all: with that many resources each batch holds
 * a sliver of the cap, none grows much by waiting, and sorting them at every cap would cost more
 * than the POSTs it saves.
 */
const FULLEST_FIRST_MAX_OPEN = 256;

export function createBatcher(opts: BatcherOptions): Batcher {
  // plan.key -> resource key -> open batch: both keys are strings made once (per plan, per record), not per add.
  const open = new Map<string, Map<string, OpenBatch>>();
  let count = 0;

  /** Removes an open batch from the maps: its ready form, or undefined if it was removed already. */
  function detach(b: OpenBatch): ReadyBatch | undefined {
    if (b.timer) clearTimeout(b.timer);
    if (b.byResource.get(b.resourceKey) !== b) return undefined;
    b.byResource.delete(b.resourceKey);
    // No empty maps left behind for plan versions that are gone.
    if (b.byResource.size === 0 && open.get(b.plan.key) === b.byResource) open.delete(b.plan.key);
    count--;
    const { timer: _t, byResource: _m, resourceKey: _k, ...ready } = b;
    return ready;
  }

  function close(b: OpenBatch): void {
    const ready = detach(b);
    if (ready) opts.onReady(ready);
  }

  return {
    add(plan, routed, ticket) {
      const { source, resourceKey, entry } = routed;
      // Waiting in a batch, a serialised entry holds its JSON off the heap (encoder.ts SerialisedEntry);
      // settled first, its size is the bytes' length rather than a count over the string.
      if (entry instanceof SerialisedEntry) entry.settle();
      const size = plan.encoder.usesRecordJson ? routed.bytes : (routed.consumedBytes ?? routed.bytes);
      let b = open.get(plan.key)?.get(resourceKey);
      if (b && b.entries.length > 0 && b.bytes + size > opts.maxBytes) {
        close(b);
        b = undefined;
        if (opts.takesLive && !opts.takesLive(plan.drain.id)) return false;
      }
      if (!b) {
        let byResource = open.get(plan.key);
        if (byResource === undefined) open.set(plan.key, (byResource = new Map()));
        const resource = buildResource(source, opts.region);
        b = {
          plan, kind: 'batch', resource, resourceJson: JSON.stringify(resource), entries: [], tickets: [], bytes: 0,
          timer: undefined, byResource, resourceKey,
        };
        const opened = b;
        byResource.set(resourceKey, b);
        count++;
        if (opts.lingerMs > 0) b.timer = setTimeout(() => close(opened), opts.lingerMs);
      }
      b.entries.push(entry);
      b.tickets.push(ticket);
      b.bytes += size;
      if (b.entries.length >= opts.maxRecords || b.bytes >= opts.maxBytes || opts.lingerMs === 0) close(b);
      return true;
    },
    flushAll() {
      for (const byResource of [...open.values()]) for (const b of [...byResource.values()]) close(b);
    },
    flushFullest() {
      if (count > FULLEST_FIRST_MAX_OPEN) return this.flushAll();
      const batches: OpenBatch[] = [];
      let records = 0;
      for (const byResource of open.values()) {
        for (const b of byResource.values()) {
          batches.push(b);
          records += b.entries.length;
        }
      }
      batches.sort((a, b) => b.entries.length - a.entries.length);
      let sent = 0;
      for (const b of batches) {
        if (sent * 2 >= records) break;
        sent += b.entries.length;
        close(b);
      }
    },
    takeOpen(drainId) {
      const taken: ReadyBatch[] = [];
      for (const byResource of [...open.values()]) {
        for (const b of [...byResource.values()]) {
          if (b.plan.drain.id !== drainId) continue;
          const ready = detach(b);
          if (ready) taken.push(ready);
        }
      }
      return taken;
    },
    get openBatches() {
      return count;
    },
  };
}
