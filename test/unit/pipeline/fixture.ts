/**
 * A pipeline on real stages (drain plans compiled from drain rows, the
 * batcher, the selector, shaper and scrubber) with the drain registry held in
 * memory and the accountant's writes collected rather than sent to a store:
 * for tests and benchmarks of routing alone.
 */
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../../src/security/secret-box.js';
import { generateSecret } from '../../../src/sign/standard-webhooks.js';
import { compilePlan, type DrainPlan } from '../../../src/plan/drain-plans.js';
import type { DrainRegistry } from '../../../src/plan/drain-registry.js';
import { createPipeline } from '../../../src/pipeline/pipeline.js';
import { ParkingSet } from '../../../src/backlog/parking.js';
import { createBatcher, type ReadyBatch } from '../../../src/batch/batcher.js';
import { noEvents } from '../../../src/telemetry/events.js';
import type { AccountingEntry } from '../../../src/account/accountant.js';
import type { Drain } from '../../../src/model/drain.js';
import { Ticket } from '../../../src/source/offset-tracker.js';
import type { ScrubPool } from '../../../src/shape/scrub-pool.js';

const box = createSecretBox(randomBytes(32));

/** A healthy http drain of `org_acme` taking every record, with a fresh signing secret; `over` changes any field. */
export function drainRow(id: string, over: Partial<Drain> = {}): Drain {
  const at = new Date('2026-11-23T00:00:00Z');
  return {
    id, orgId: 'org_acme', name: id, type: 'http', endpoint: `https://127.0.0.1:1/${id}`, site: null, format: 'json', headers: [],
    secret: box.seal(generateSecret()), previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null,
    selectors: { sources: ['skill', 'mcp', 'execution', 'agent_error'], minSeverity: 'debug', agents: '*', environments: ['production'], includeContent: true },
    sampling: null, redact: null, scrubRules: null, state: 'healthy', pauseReason: null, verifiedAt: at, verification: null,
    version: 1, createdBy: { type: 'user', id: 'u' }, createdAt: at, updatedAt: at, ...over,
  };
}

export interface PipelineUnderTest {
  plans: DrainPlan[];
  /** Routes one chunk of raw messages; returns its ticket, sealed. */
  route(messages: readonly (Buffer | string | null)[]): Ticket;
  /** Closes every open batch and returns all batches handed on so far. */
  flush(): ReadyBatch[];
  accounted: AccountingEntry[];
  parking: ParkingSet;
}

/** `keepAccounting: false` (benchmarks) discards the accountant's writes instead of keeping them in `accounted`. */
export function pipelineFor(drains: Drain[], opts: { maxRecords?: number; keepAccounting?: boolean; scrubPool?: ScrubPool } = {}): PipelineUnderTest {
  const plans = drains.map((d) => compilePlan(d, box));
  const byOrg = new Map<string, DrainPlan[]>();
  for (const p of plans) byOrg.set(p.drain.orgId, [...(byOrg.get(p.drain.orgId) ?? []), p]);
  const registry: DrainRegistry = {
    degradationOf: () => 'none',
    plansFor: (orgId) => byOrg.get(orgId) ?? [],
    planFor: (id) => plans.find((p) => p.drain.id === id),
    allPlans: () => plans.values(),
    current: async () => {},
    refresh: async () => {},
    start: async () => {},
    stop: async () => {},
  };
  const ready: ReadyBatch[] = [];
  const batcher = createBatcher({ maxRecords: opts.maxRecords ?? 1_000_000, maxBytes: 1 << 30, lingerMs: 60_000, onReady: (b) => ready.push(b) });
  const accounted: AccountingEntry[] = [];
  const parking = new ParkingSet();
  const route = createPipeline({
    sourceName: 'test', registry, batcher, events: noEvents, parking, ...(opts.scrubPool ? { scrubPool: opts.scrubPool } : {}),
    accountant: {
      record: async (e) => {
        if (opts.keepAccounting !== false) accounted.push(e);
      },
      flush: async () => {},
      stop: async () => {},
      healthy: () => true,
    },
  });
  return {
    plans, accounted, parking,
    route(messages) {
      const ticket = new Ticket(messages.length, () => {});
      route({ messages, ticket });
      ticket.seal();
      return ticket;
    },
    flush() {
      batcher.flushAll();
      return ready.splice(0);
    },
  };
}
