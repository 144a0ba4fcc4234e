/**
 * Groups shaped records into open batches, one per (drain plan, resource),
 * and hands a batch on when it reaches BATCH_MAX_RECORDS or BATCH_MAX_BYTES
 * (bytes of record JSON, before compression) or has been open
 * BATCH_LINGER_MS. A batch never holds two resources.
 */
import type { AgentRecord } from '../source/record.js';
import type { DeliveredRecord } from '../shape/delivered-record.js';
import type { Ticket } from '../source/offset-tracker.js';
import type { BatchEntry } from '../encode/encoder.js';
import type { DrainPlan } from '../pipeline/drain-plans.js';
import { buildResource, resourceKey, type Resource } from './resource.js';

export interface ReadyBatch {
  plan: DrainPlan;
  kind: 'batch' | 'test' | 'heartbeat';
  resource: Resource;
  resourceJson: string;
  entries: BatchEntry[];
  /** One per entry: released when the entry is accounted for. */
  tickets: Ticket[];
  bytes: number;
  /** Batch id of the first attempt, when the caller already announced one (the test route). */
  batchId?: string;
}

export interface BatcherOptions {
  maxRecords: number;
  maxBytes: number;
  lingerMs: number;
  region?: string | undefined;
  onReady: (batch: ReadyBatch) => void;
}

interface OpenBatch extends ReadyBatch {
  timer: NodeJS.Timeout | undefined;
}

export interface Batcher {
  add(plan: DrainPlan, source: AgentRecord, record: DeliveredRecord, scrubHits: number, ticket: Ticket): void;
  flushAll(): void;
  readonly openBatches: number;
}

export function createBatcher(opts: BatcherOptions): Batcher {
  const open = new Map<string, OpenBatch>();

  function close(key: string, b: OpenBatch): void {
    if (b.timer) clearTimeout(b.timer);
    open.delete(key);
    const { timer: _t, ...ready } = b;
    opts.onReady(ready);
  }

  return {
    add(plan, source, record, scrubHits, ticket) {
      const key = `${plan.key}\u0001${resourceKey(source)}`;
      const json = JSON.stringify(record);
      const size = Buffer.byteLength(json);
      let b = open.get(key);
      if (b && b.entries.length > 0 && b.bytes + size > opts.maxBytes) {
        close(key, b);
        b = undefined;
      }
      if (!b) {
        const resource = buildResource(source, opts.region);
        b = {
          plan, kind: 'batch', resource, resourceJson: JSON.stringify(resource), entries: [], tickets: [], bytes: 0,
          timer: undefined,
        };
        const opened = b;
        open.set(key, b);
        if (opts.lingerMs > 0) {
          b.timer = setTimeout(() => {
            if (open.get(key) === opened) close(key, opened);
          }, opts.lingerMs);
        }
      }
      b.entries.push({ record, json, scrubHits });
      b.tickets.push(ticket);
      b.bytes += size;
      if (b.entries.length >= opts.maxRecords || b.bytes >= opts.maxBytes || opts.lingerMs === 0) close(key, b);
    },
    flushAll() {
      for (const [key, b] of [...open]) close(key, b);
    },
    get openBatches() {
      return open.size;
    },
  };
}
