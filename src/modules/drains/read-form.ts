/** The drain read form (spec 01 part 2.1): never a header value, never a secret. */
import type { Drain } from '../../model/drain.js';
import type { DeliveryRecord } from '../../model/delivery.js';
import type { DrainTables } from './tables/index.js';
import type { DrainHealthFacts } from './tables/health.js';
import type { CircuitRow } from './tables/circuits.js';
import { HOUR_MS, dayOf, hourOf } from '../../model/time.js';
import { degradationFor, type Quota } from '../../model/quota-ladder.js';
import type { DeliveryRead, DrainRead } from './schemas.js';
import { destinationOf } from '../../destinations/index.js';
import { DROP_REASONS, noDrops } from '../../model/drop-reasons.js';


const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** `last4` of a header value: its last four characters, or '' when shorter than 8. */
export const last4 = (value: string): string => (value.length < 8 ? '' : value.slice(-4));

/** What a read form reports live: the drain's health facts, its backlog, today's usage and its circuit. */
export interface DrainLive {
  facts: DrainHealthFacts;
  backlog: { records: number; bytes: number };
  used: { events: number; bytes: number };
  /** The drain's circuit (undefined: never opened) and its openings by hour over the 24 hours. */
  circuit: { row: CircuitRow | undefined; openings: Map<number, number> };
}

/** Reads a drain's live facts (three health statements, the backlog's size, today's usage, its circuit). */
export async function readDrainLive(tables: Pick<DrainTables, 'health' | 'backlog' | 'circuits'>, drainId: string, nowMs = Date.now()): Promise<DrainLive> {
  const newest = hourOf(nowMs);
  const [facts, backlog, used, row, openings] = await Promise.all([
    tables.health.facts(drainId, nowMs),
    tables.backlog.sizeOf(drainId),
    tables.backlog.usageOf(drainId, dayOf(nowMs)),
    tables.circuits.get(drainId),
    tables.circuits.openingsByHour(drainId, newest - 23, newest),
  ]);
  return { facts, backlog, used, circuit: { row, openings } };
}

export async function drainReadForm(tables: Pick<DrainTables, 'health' | 'backlog' | 'circuits'>, d: Drain, quota: Quota, nowMs = Date.now()): Promise<DrainRead> {
  return composeReadForm(d, await readDrainLive(tables, d.id, nowMs), quota, nowMs);
}

/** The read form of `d` with `live` facts. */
export function composeReadForm(d: Drain, live: DrainLive, quota: Quota, nowMs = Date.now()): DrainRead {
  const { facts, backlog, used, circuit } = live;
  const circuitState = circuit.row?.state ?? 'closed';
  const destination = destinationOf(d.type);
  const sum = (k: 'seen' | 'delivered' | 'dropped' | 'rejected') => facts.hourly.reduce((n, p) => n + p[k], 0);
  const droppedByReason = noDrops();
  for (const p of facts.hourly) for (const r of DROP_REASONS) droppedByReason[r] += p.droppedByReason[r];
  const seen = sum('seen');
  const delivered = sum('delivered');
  const notDelivered = DROP_REASONS.reduce((n, r) => n + droppedByReason[r], 0);
  const dayStart = Math.floor(nowMs / (24 * HOUR_MS)) * 24;
  const health: DrainRead['health'] = {
    lastSuccessAt: iso(facts.lastSuccessAt),
    lastFailureAt: iso(facts.lastFailureAt),
    lastStatusCode: facts.lastStatusCode,
    backlog: backlog.records,
    backlogBytes: backlog.bytes,
    deliveredCount24h: delivered,
    droppedCount24h: sum('dropped'),
    rejectedCount24h: sum('rejected'),
    p50LatencyMs: facts.p50LatencyMs,
    p99LatencyMs: facts.p99LatencyMs,
    scrubHits24h: facts.scrubHits24h,
    pauseReason: d.pauseReason,
    circuitOpenings24h: [...circuit.openings.values()].reduce((a, b) => a + b, 0),
    hourly: facts.hourly.map((p) => ({ ...p, circuitOpenings: circuit.openings.get(p.h) ?? 0 })),
    // In flight is what the counters do not place yet: read by a worker, not yet delivered, dropped or
    // parked (docs/delivery.md, "Where every record went").
    last24h: { seen, delivered, droppedByReason, inFlight: seen - delivered - notDelivered - backlog.records, parked: backlog.records },
  };
  const read: DrainRead = {
    id: d.id,
    orgId: d.orgId,
    name: d.name,
    type: d.type,
    endpoint: d.endpoint,
    site: destination.endpoint.from === 'site' ? d.site ?? undefined : undefined,
    format: d.format,
    headers: d.headers.map((h) => ({ name: h.name, last4: h.last4 })),
    selectors: {
      sources: d.selectors.sources ?? ['*'],
      minSeverity: d.selectors.minSeverity,
      agents: d.selectors.agents,
      environments: d.selectors.environments,
      includeContent: d.selectors.includeContent,
    },
    sampling: d.sampling,
    redact: d.redact,
    scrubRules: d.scrubRules ? { count: d.scrubRules.length, ids: d.scrubRules.map((r) => r.id) } : null,
    signing: destination.signs ? { enabled: d.secret !== null, rotation: rotationOf(d, nowMs) } : undefined,
    state: d.state,
    verifiedAt: iso(d.verifiedAt),
    verification: d.verification,
    health,
    circuit: circuitState,
    throttledUntil: circuitState === 'open' ? iso(circuit.row?.openUntil ?? null) : null,
    quota: {
      ...quota,
      usedEvents: used.events,
      usedBytes: used.bytes,
      resetsAt: new Date((dayStart + 24) * HOUR_MS).toISOString(),
      degradation: degradationFor(used, quota),
    },
    version: d.version,
    createdBy: d.createdBy,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
  return read;
}

function rotationOf(d: Drain, nowMs: number): { startedAt: string; expiresAt: string } | null {
  if (!d.rotationStartedAt || !d.rotationExpiresAt || d.rotationExpiresAt.getTime() <= nowMs) return null;
  return { startedAt: d.rotationStartedAt.toISOString(), expiresAt: d.rotationExpiresAt.toISOString() };
}

/** A delivery attempt as GET .../deliveries answers it (spec 01 part 4.2): never its record ids. */
export function deliveryReadForm(d: DeliveryRecord): DeliveryRead {
  return {
    id: d.id,
    orgId: d.orgId,
    drainId: d.drainId,
    batchId: d.batchId,
    kind: d.kind,
    attempt: d.attempt,
    recordCount: d.recordCount,
    bytes: d.bytes,
    bytesCompressed: d.bytesCompressed,
    statusCode: d.statusCode,
    latencyMs: d.latencyMs,
    ok: d.ok,
    errorClass: d.errorClass,
    responseExcerpt: d.responseExcerpt,
    scrubHits: d.scrubHits,
    startedAt: d.startedAt.toISOString(),
    expiresAt: d.expiresAt.toISOString(),
    firstRecordId: d.firstRecordId,
    lastRecordId: d.lastRecordId,
  };
}
