/**
 * The record path from a source chunk to the batcher: decode and validate
 * (invalid messages become counted dead letters), route to the drains of the
 * record's organization, select, shape, and add to that drain's open batch.
 * Routing is synchronous; everything slower happens after the batcher.
 * Drains whose output is the same record share its shaping, scrubbing and
 * JSON (shape-groups.ts); selection, sampling, the quota ladder, parking and
 * tickets stay per drain.
 */
import { deadLetterClass, decodeRecord, orgIdOf } from '../model/record.js';
import { deadLetterDropReason } from '../model/drop-reasons.js';
import { logCopyOf, type LogCopy } from '../modules/logs/pages.js';
import { SAMPLED_OUT, SELECTED } from '../select/selector.js';
import type { RoutingTally } from '../telemetry/events.js';
import { shapeRecord, type DeliveredRecord } from '../shape/delivered-record.js';
import { INLINE_SCRUB_WORK, scrubbedTextLength } from '../shape/scrubber.js';
import type { ScrubPool } from '../shape/scrub-pool.js';
import { SCRUB_DEFERRED } from '../shape/deferred-scrub.js';
import type { AgentRecord } from '../model/record.js';
import type { Ticket } from '../model/ticket.js';
import type { Batcher } from '../batch/batcher.js';
import type { Accountant } from '../account/accountant.js';
import type { DrainPlan } from '../plan/drain-plans.js';
import type { DrainRegistry } from '../plan/drain-registry.js';
import { admits } from '../model/quota-ladder.js';
import { droppedEntry, reachedEntry } from '../account/entries.js';
import type { HourlyIncrement } from '../modules/drains/tables/health.js';
import type { ParkingSet } from '../backlog/parking.js';
import { buildResource, resourceKey } from '../model/resource.js';
import type { ParkedRecord } from '../modules/drains/tables/backlog.js';
import { bucketOf } from '../modules/drains/tables/backlog-pages.js';
import type { PipelineEvents } from '../telemetry/events.js';
import { shapeGroups } from './shape-groups.js';
import { LazyRoutedRecord, type RoutedRecord } from '../batch/batcher.js';
import { SerialisedEntry, ShapedEntry, type BatchEntry } from '../encode/encoder.js';

/**
 * Agents whose resource keys are kept, at most: past it the map starts again. Above the agents a
 * worker commonly sees at once: a drain of 10,000 agents batching across time parks records of
 * every one of them each second, and a map that starts again every 4,096 agents kept few of them.
 */
const MAX_AGENTS = 16_384;

/**
 * What is kept of an agent's resource (model/resource.ts): its key, and once one of its records is
 * parked, its resource's JSON and backlog bucket.
 */
export interface AgentResource {
  readonly agentName: string;
  readonly agentVersion: string | undefined;
  readonly environment: string;
  readonly orgId: string;
  readonly key: string;
  resourceJson?: string;
  bucket?: number;
}

/**
 * The resource key of a record, and the resource JSON and backlog bucket of a parked one, made
 * once per agent rather than once per record: a key made per record was a string of seven pieces
 * that the batcher's map lookup then flattened into another, two short-lived strings a record; the
 * bucket is a hash over the resource's JSON, which at thousands of agents a park hashed once a
 * record. The JSON was made once a chunk, but a chunk holds a record or two of each of thousands
 * of agents, so it was a string a parked record that lived until the park was written: the largest
 * part of what a spilling worker promoted (docs/benchmarks-engine-findings.md). Kept, it is about 300 bytes an
 * agent. The agent's entry is answered while its name, version, environment and organization are
 * the same (the resource is made of those, its id and the worker's region, one a pipeline).
 */
export class AgentResources {
  private readonly byAgent = new Map<string, AgentResource>();

  of(r: AgentRecord): AgentResource {
    const known = this.byAgent.get(r.agentId);
    if (known !== undefined && known.agentName === r.agentName && known.agentVersion === r.agentVersion && known.environment === r.environment && known.orgId === r.orgId) return known;
    if (this.byAgent.size >= MAX_AGENTS) this.byAgent.clear();
    const made: AgentResource = { agentName: r.agentName, agentVersion: r.agentVersion, environment: r.environment, orgId: r.orgId, key: resourceKey(r) };
    this.byAgent.set(r.agentId, made);
    return made;
  }
}

export interface PipelineOptions {
  sourceName: string;
  registry: DrainRegistry;
  batcher: Batcher;
  accountant: Accountant;
  events: PipelineEvents;
  parking: ParkingSet;
  region?: string | undefined;
  /** Where records too heavy to scrub on this thread are scrubbed (scrub-pool.ts); without it, every scrub is inline. */
  scrubPool?: ScrubPool;
}

/** A chunk of raw messages as a source hands it over, with the ticket its records hold. */
export interface RecordChunk {
  messages: readonly (Buffer | string | null)[];
  ticket: Ticket;
}

export function createPipeline(opts: PipelineOptions): (chunk: RecordChunk) => void {
  const resources = new AgentResources();
  return ({ messages, ticket }) => {
    const observed = new Date().toISOString();
    opts.events.consumed(opts.sourceName, messages.length);
    const letters: { source: string; reason: string; payload: string }[] = [];
    const copies: LogCopy[] = [];
    const routing = new Routing(opts, resources);
    const inline = shapeInline(observed);
    for (const raw of messages) {
      if (raw === null) {
        letters.push({ source: opts.sourceName, reason: 'empty message', payload: '' });
        continue;
      }
      const decoded = decodeRecord(raw);
      if (!decoded.ok) {
        letters.push({ source: opts.sourceName, reason: decoded.reason, payload: raw.toString() });
        // A dead letter naming an organization reached that organization's drains: each counts it.
        const orgId = orgIdOf(raw);
        if (orgId !== undefined) routing.deadLettered(opts.registry.plansFor(orgId), deadLetterDropReason(deadLetterClass(decoded.reason)));
        continue;
      }
      const record = decoded.record;
      copies.push(logCopyOf(record, decoded.json ?? JSON.stringify(record), decoded.timeMs));
      const plans = opts.registry.plansFor(record.orgId);
      if (opts.scrubPool && heavyFor(record, plans)) {
        if (opts.scrubPool.full(record.orgId)) {
          // Its organization has its cap of heavy records waiting for the pool: parked now, scrubbed
          // by the backlog pump (deferred-scrub.ts), so the flood holds nothing read from the source.
          routing.route(record, raw.length, plans, shapeDeferring(record, observed), ticket);
          continue;
        }
        // Scrubbed off this thread, then routed like the others (the plans of this moment).
        ticket.hold();
        void routeOffloaded(opts, opts.scrubPool, observed, record, raw.length, plans, ticket).finally(() => ticket.release());
        continue;
      }
      routing.route(record, raw.length, plans, inline, ticket);
    }
    routing.account(ticket, copies);
    if (letters.length > 0) {
      for (const l of letters) opts.events.deadLettered(deadLetterClass(l.reason));
      ticket.hold();
      void opts.accountant.record({ deadLetters: letters }).then(() => ticket.release());
    }
  };
}

/**
 * A record shaped and scrubbed for a plan (inline, or already by the scrub pool), as the entry its
 * shape group's batches hold: `jsonOnly`, its drains encode from the JSON alone (shape-groups.ts).
 */
type ShapeFor = (record: AgentRecord, plan: DrainPlan, jsonOnly: boolean) => BatchEntry;

/**
 * The entry of a shaped record. Drains that encode from the JSON alone get it now and never hold
 * the shaped object (SerialisedEntry); for the others the JSON is made when first read: never, for
 * OTLP and vendor drains that do not park it.
 */
const entryOf = (shaped: DeliveredRecord, hits: number, jsonOnly: boolean): BatchEntry =>
  jsonOnly || hits === SCRUB_DEFERRED ? SerialisedEntry.written(shaped, hits) : new ShapedEntry(shaped, hits);

/** One a chunk, not one a record: the routing of every record of the chunk calls it. */
const shapeInline = (observed: string): ShapeFor => (record, plan, jsonOnly) => {
  const shaped = shapeRecord(record, observed, plan.shape);
  return entryOf(shaped, plan.scrubber.scrubRecord(shaped), jsonOnly);
};

/** Shaped for every plan; scrubbed inline where light, left for the backlog pump (SCRUB_DEFERRED) where heavy. */
const shapeDeferring = (record: AgentRecord, observed: string): ShapeFor => {
  const length = scrubbedTextLength(record);
  return (_record, plan, jsonOnly) => {
    const shaped = shapeRecord(record, observed, plan.shape);
    return entryOf(shaped, length * plan.scrubber.cost > INLINE_SCRUB_WORK ? SCRUB_DEFERRED : plan.scrubber.scrubRecord(shaped), jsonOnly);
  };
};

/** Whether a drain selecting the record would scrub it past INLINE_SCRUB_WORK (scrubber.ts). */
function heavyFor(record: AgentRecord, plans: readonly DrainPlan[]): boolean {
  let length = -1;
  for (const plan of plans) {
    if (plan.scrubber.cost === 0) continue;
    if (length < 0) length = scrubbedTextLength(record);
    if (length * plan.scrubber.cost > INLINE_SCRUB_WORK && plan.select(record) === SELECTED) return true;
  }
  return false;
}

/** A heavy record: shaped here, scrubbed by the pool where heavy, then routed with its own accounting. */
async function routeOffloaded(
  opts: PipelineOptions, pool: ScrubPool, observed: string, record: AgentRecord, rawBytes: number, plans: readonly DrainPlan[], ticket: Ticket,
): Promise<void> {
  const groups = shapeGroups(plans);
  const ready = new Map<number, { shaped: DeliveredRecord; hits: number }>();
  const length = scrubbedTextLength(record);
  for (let p = 0; p < plans.length; p++) {
    const plan = plans[p]!;
    const slot = groups.slotOf[p]!;
    if (ready.has(slot) || plan.select(record) !== SELECTED) continue;
    const shaped = shapeRecord(record, observed, plan.shape);
    const heavy = length * plan.scrubber.cost > INLINE_SCRUB_WORK;
    ready.set(slot, { shaped, hits: heavy ? await pool.scrub(plan.scrubber, shaped, record.orgId) : plan.scrubber.scrubRecord(shaped) });
  }
  const routing = new Routing(opts, new AgentResources());
  const inline = shapeInline(observed);
  routing.route(record, rawBytes, plans, (r, plan, jsonOnly) => {
    const done = ready.get(groups.slotOf[plans.indexOf(plan)]!);
    return done ? entryOf(done.shaped, done.hits, jsonOnly) : inline(r, plan, jsonOnly);
  }, ticket);
  routing.account(ticket, []);
}

/**
 * Routing of records to their drains, with what a chunk (or an offloaded record) accounts for
 * at its end: parked records, quota drops, tallies.
 */
/** What reached one drain in a chunk without a delivery of its own yet: `seen` counts every record. */
interface Reached {
  /** The tally of the drain's type, found once per drain and chunk rather than once per record. */
  readonly tally: RoutingTally;
  seen: number;
  selector: number;
  sampling: number;
  oversize: number;
  dead_letter: number;
}

class Routing {
  private readonly parked: ParkedRecord[] = [];
  private readonly reached = new Map<DrainPlan, Reached>();
  private readonly quotaDropped = new Map<DrainPlan, string[]>();
  private readonly tallies = new Map<string, RoutingTally>();

  constructor(
    private readonly opts: PipelineOptions,
    private readonly resources: AgentResources,
  ) {}

  private tallyOf(type: string): RoutingTally {
    let t = this.tallies.get(type);
    if (!t) this.tallies.set(type, (t = { selected: 0, sampledOut: 0, skipped: 0, deadLettered: 0, oversize: 0, scrubbed: 0, scrubHits: 0 }));
    return t;
  }

  private reachedOf(plan: DrainPlan): Reached {
    let r = this.reached.get(plan);
    if (!r) this.reached.set(plan, (r = { tally: this.tallyOf(plan.drain.type), seen: 0, selector: 0, sampling: 0, oversize: 0, dead_letter: 0 }));
    return r;
  }

  /** A dead letter naming the organization of `plans`: each of its drains saw it, and lost it. */
  deadLettered(plans: readonly DrainPlan[], reason: 'oversize' | 'dead_letter'): void {
    for (const plan of plans) {
      const r = this.reachedOf(plan);
      r.seen++;
      r[reason]++;
      if (reason === 'oversize') r.tally.oversize++;
      else r.tally.deadLettered++;
    }
  }

  /** Routing is synchronous: the offloaded path has its shapes scrubbed before it routes. */
  route(record: AgentRecord, rawBytes: number, plans: readonly DrainPlan[], shapeFor: ShapeFor, ticket: Ticket): void {
    const { opts } = this;
    const groups = shapeGroups(plans);
    // The record shaped, scrubbed and serialised once per shape group (see shape-groups.ts): the
    // first group's in `first`, any other's in `shapes` (most organizations' drains are one group).
    let first: RoutedRecord | undefined;
    let shapes: (RoutedRecord | undefined)[] | undefined;
    let res: AgentResource | undefined;
    for (let p = 0; p < plans.length; p++) {
      const plan = plans[p]!;
      const verdict = plan.select(record);
      const reached = this.reachedOf(plan);
      reached.seen++;
      const tally = reached.tally;
      if (verdict !== SELECTED) {
        if (verdict === SAMPLED_OUT) {
          reached.sampling++;
          tally.sampledOut++;
        } else {
          reached.selector++;
          tally.skipped++;
        }
        continue;
      }
      tally.selected++;
      if (plan.deliverable && !admits(opts.registry.degradationOf(plan.drain.id), record.severity)) {
        const q = this.quotaDropped.get(plan);
        if (q) q.push(record.id);
        else this.quotaDropped.set(plan, [record.id]);
        continue;
      }
      const slot = groups.slotOf[p]!;
      let shape = slot === 0 ? first : (shapes ??= new Array<RoutedRecord | undefined>(groups.count))[slot];
      if (shape === undefined) {
        shape = new LazyRoutedRecord(record, (res ??= this.resources.of(record)).key, shapeFor(record, plan, groups.jsonOnly[slot]!), rawBytes);
        if (slot === 0) first = shape;
        else shapes![slot] = shape;
      }
      const hits = shape.entry.scrubHits;
      if (hits > 0) {
        tally.scrubbed++;
        tally.scrubHits += hits;
      }
      // Not delivering now (unverified, paused, failing, spilling, or queued behind parked records), or
      // stopped taking records live as this record closed its batch (batcher.ts takesLive): park durably.
      // A record not yet scrubbed (SCRUB_DEFERRED) is parked whatever the drain's state.
      if (plan.deliverable && hits !== SCRUB_DEFERRED && !opts.parking.has(plan.drain.id)) {
        ticket.hold();
        if (opts.batcher.add(plan, shape, ticket)) continue;
        ticket.release();
      }
      res ??= this.resources.of(record);
      const resourceJson = (res.resourceJson ??= JSON.stringify(buildResource(record, opts.region)));
      this.parked.push({
        // A written entry's JSON is parked as its bytes (SerialisedEntry), a shaped one's as text.
        drainId: plan.drain.id, orgId: plan.drain.orgId, resourceJson, bucket: (res.bucket ??= bucketOf(resourceJson)), recordJson: shape.entry.utf8 ?? shape.entry.json,
        recordId: record.id, bytes: shape.bytes, scrubHits: hits,
      });
    }
  }

  /** Accounts for what was routed (and the chunk's platform copies): the ticket waits for each write. */
  account(ticket: Ticket, copies: LogCopy[]): void {
    const { opts, parked } = this;
    for (const [type, t] of this.tallies) opts.events.routed(type, t);
    // What reached each drain is counted with the chunk's parked records and copies, before any of
    // its records can be delivered (they go through the same accountant, in order).
    const nowMs = Date.now();
    const hourly: HourlyIncrement[] = [];
    for (const [plan, r] of this.reached) {
      const { seen, selector, sampling, oversize, dead_letter } = r;
      hourly.push(reachedEntry(plan.drain.id, seen, { selector, sampling, oversize, dead_letter }, nowMs));
    }
    if (parked.length > 0 || copies.length > 0 || hourly.length > 0) {
      // The platform copy and the parked records are accounted like deliveries: the offset waits for them.
      // Each drain with parked records stays parked at least until they are written (parking.ts).
      const landed = [...new Set(parked.map((p) => p.drainId))].map((d) => opts.parking.parking(d));
      // Parked records count in flight, one hold each, until written: a drain parking everything at
      // full speed (paused, spilling) must meet MAX_IN_FLIGHT_RECORDS as delivered records do, or the
      // consumer outruns Postgres and the accountant's buffer grows without bound.
      const holds = Math.max(1, parked.length);
      ticket.hold(holds);
      void opts.accountant.record({ backlog: parked, logs: copies, hourly }).then(() => {
        for (const done of landed) done();
        ticket.release(holds);
      });
    }
    if (this.quotaDropped.size > 0) {
      const entries = [...this.quotaDropped].map(([plan, ids]) => {
        opts.events.recordsDropped(plan.drain.type, 'quota', ids.length);
        return droppedEntry(plan.drain, ids, 'quota', 0);
      });
      ticket.hold();
      void opts.accountant
        .record({ deliveries: entries.flatMap((e) => e.deliveries), hourly: entries.flatMap((e) => e.hourly) })
        .then(() => ticket.release());
    }
  }
}
