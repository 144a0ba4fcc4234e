/**
 * The ledger every fault test ends with. For one drain, each record id
 * produced for it must be either received by its destination (answered 2xx)
 * or named by a `dropped` delivery record with its reason; nothing else is
 * acceptable. Duplicates are allowed (delivery is at least once) but counted
 * and reported on a console line.
 *
 * Usage:
 *   const received = receivedRecordIds(fx.receiver.accepted(), '/path');
 *   const report = await ledgerOf({ drainId, produced: ids, received, sql: store.sql });
 *   expectNothingLost(report);
 * or, while the engine is still catching up, `await settledLedger(() => ({...}))`.
 */
import { expect } from 'vitest';
import type { ReceivedRequest } from '../../src/devtools/https-receiver.js';
import type { Sql } from '../../src/store/sql.js';
import { createDeliveriesRepo } from '../../src/modules/drains/tables/deliveries.js';
import { parseBatch } from './receiver.js';
import { attributesOf, decodeExportLogsRequest } from './otlp-decoder.js';
import { waitFor } from './app.js';

/** Records the platform makes itself (not produced by a test): never part of a ledger. */
const PLATFORM_EVENTS = new Set(['svc.drain.heartbeat', 'svc.drain.test']);

interface IdAndEvent {
  id: string;
  event: unknown;
}

/** The records of one received request, whatever the drain's encoding (json, ndjson, otlp, vendor-a, vendor-b). */
function recordsOf(r: ReceivedRequest): IdAndEvent[] {
  if (r.headers['content-type'] === 'application/x-protobuf') {
    const out: IdAndEvent[] = [];
    for (const rl of decodeExportLogsRequest(r.body).resourceLogs ?? []) {
      for (const sl of rl.scopeLogs ?? []) {
        for (const lr of sl.logRecords ?? []) out.push({ id: String(attributesOf(lr.attributes)['svc.record.id']), event: lr.eventName });
      }
    }
    return out;
  }
  const text = r.body.toString('utf8');
  // vendor-a: a JSON array of entries, each with its id and eventName.
  if (text.trimStart().startsWith('[')) return (JSON.parse(text) as { id: string; eventName: unknown }[]).map((e) => ({ id: e.id, event: e.eventName }));
  // json and ndjson batches; vendor-b lines (id, event) parse as ndjson too.
  return parseBatch(r).records.map((rec) => ({ id: rec.id, event: rec.eventName ?? rec.event }));
}

/** The record ids a destination received, with how often each arrived; `path` narrows to one drain's endpoint. */
export function receivedRecordIds(requests: readonly ReceivedRequest[], path?: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests) {
    if (path !== undefined && r.path !== path) continue;
    for (const rec of recordsOf(r)) {
      if (PLATFORM_EVENTS.has(String(rec.event))) continue;
      counts.set(rec.id, (counts.get(rec.id) ?? 0) + 1);
    }
  }
  return counts;
}

export interface LedgerInput {
  drainId: string;
  /** Every record id produced for this drain (a record goes to each drain of its organization). */
  produced: Iterable<string>;
  /** Ids the destination received, with counts (receivedRecordIds). */
  received: ReadonlyMap<string, number>;
  /** The store, to read the drain's `dropped` delivery records. */
  sql: Sql;
  /** Names the check in the report line; the drain id by default. */
  label?: string;
}

export interface LedgerReport {
  label: string;
  /** Distinct ids produced. */
  produced: number;
  /** Produced ids received at least once. */
  received: number;
  /** Produced ids not received but named by a dropped record, by reason (an id dropped for two reasons counts under both). */
  droppedByReason: Record<string, number>;
  /** Produced ids accounted more than once (received twice, or received and dropped, or dropped twice). */
  duplicates: number;
  /** Produced ids neither received nor dropped, in production order. */
  missing: string[];
  /** Ids received or dropped for this drain that were never produced for it. */
  unexpected: string[];
}

export async function ledgerOf(input: LedgerInput): Promise<LedgerReport> {
  const produced = [...new Set(input.produced)];
  const producedSet = new Set(produced);
  const dropped = new Map<string, { reasons: Set<string>; times: number }>();
  for (const row of await createDeliveriesRepo(input.sql).droppedRecords(input.drainId)) {
    for (const id of row.recordIds) {
      const d = dropped.get(id) ?? { reasons: new Set<string>(), times: 0 };
      d.reasons.add(row.reason);
      d.times++;
      dropped.set(id, d);
    }
  }
  const droppedByReason: Record<string, number> = {};
  let received = 0;
  let duplicates = 0;
  const missing: string[] = [];
  for (const id of produced) {
    const times = input.received.get(id) ?? 0;
    const drop = dropped.get(id);
    if (times > 0) received++;
    else if (drop) for (const reason of drop.reasons) droppedByReason[reason] = (droppedByReason[reason] ?? 0) + 1;
    else missing.push(id);
    if (times + (drop?.times ?? 0) > 1) duplicates++;
  }
  const unexpected = [...new Set([...input.received.keys(), ...dropped.keys()])].filter((id) => !producedSet.has(id));
  return { label: input.label ?? input.drainId, produced: produced.length, received, droppedByReason, duplicates, missing, unexpected };
}

/** One line a reader of the test output can compare between runs. */
export function describeLedger(r: LedgerReport): string {
  const drops = Object.entries(r.droppedByReason).map(([k, v]) => `${k}=${v}`).join(' ') || 'none';
  return `ledger ${r.label}: produced ${r.produced}, received ${r.received}, dropped ${drops}, duplicates ${r.duplicates}, missing ${r.missing.length}, unexpected ${r.unexpected.length}`;
}

/** Fails naming the first missing or unexpected ids; reports the counts (duplicates included) on the console. */
export function expectNothingLost(report: LedgerReport): void {
  console.info(describeLedger(report));
  expect(report.missing.slice(0, 20), `${report.label}: ${report.missing.length} produced records neither received nor dropped; first ones`).toEqual([]);
  expect(report.unexpected.slice(0, 20), `${report.label}: ${report.unexpected.length} records received or dropped that were never produced for this drain`).toEqual([]);
}

/**
 * Polls the ledger until nothing is missing (deliveries and their accounting
 * may still be landing), then answers the last report; after `timeoutMs` it
 * answers the report as it stands, for expectNothingLost to fail with.
 */
export async function settledLedger(input: () => LedgerInput, timeoutMs = 30_000): Promise<LedgerReport> {
  let last: LedgerReport | undefined;
  try {
    return await waitFor(async () => {
      last = await ledgerOf(input());
      return last.missing.length === 0 ? last : undefined;
    }, { what: 'every produced record received or dropped', timeoutMs, intervalMs: 250 });
  } catch {
    return last ?? ledgerOf(input());
  }
}
