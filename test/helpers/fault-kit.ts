/**
 * What every infrastructure fault test ends with, on top of the Kafka
 * fixture: the ledger of each drain (every produced record received or
 * dropped with a reason), delivery records that agree with what arrived,
 * and a graceful stop that still exits 0 after the fault.
 */
import { expect, onTestFailed } from 'vitest';
import type { KafkaFixture } from './kafka-fixture.js';
import type { LogdrainProcess } from './processes.js';
import { expectNothingLost, receivedRecordIds, settledLedger, type LedgerReport } from './ledger.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A drain under test: its id, its endpoint path at the receiver, and the ids produced for it. */
export interface DrainUnderTest {
  drainId: string;
  path: string;
  produced: readonly string[];
}

/** Waits for each drain's ledger to settle, then asserts nothing was lost (duplicates reported). */
export async function expectLedgersBalanced(fx: KafkaFixture, drains: readonly DrainUnderTest[], label: string, timeoutMs = 30_000): Promise<LedgerReport[]> {
  const reports: LedgerReport[] = [];
  for (const d of drains) {
    const report = await settledLedger(
      () => ({ drainId: d.drainId, produced: d.produced, received: receivedRecordIds(fx.receiver.accepted(), d.path), sql: fx.api.store.sql, label: `${label} ${d.path}` }),
      timeoutMs,
    );
    expectNothingLost(report);
    reports.push(report);
  }
  return reports;
}

/** Delivery attempts of a drain by outcome: records in successful batch rows, and failed attempts by error class. */
export async function deliveryRecordsOf(fx: KafkaFixture, drainId: string): Promise<{ deliveredRecords: number; failedByClass: Record<string, number> }> {
  const rows = await fx.api.store.sql.query<{ ok: boolean; kind: string; record_count: number | null; error_class: string | null }>(
    'select ok, kind, record_count, error_class from deliveries where drain_id = $1',
    [drainId],
  );
  let deliveredRecords = 0;
  const failedByClass: Record<string, number> = {};
  for (const r of rows) {
    if (r.ok && r.kind === 'batch') deliveredRecords += r.record_count ?? 0;
    else if (!r.ok && r.kind !== 'dropped') failedByClass[r.error_class ?? 'none'] = (failedByClass[r.error_class ?? 'none'] ?? 0) + 1;
  }
  return { deliveredRecords, failedByClass };
}

/**
 * The delivery records tell the truth, for a drain that drops nothing: every
 * produced record sits in a successful batch row (a record is committed only
 * once accounted), and no row claims a delivery the destination did not
 * answer 2xx to.
 */
export async function expectDeliveryRecordsAgree(fx: KafkaFixture, d: DrainUnderTest): Promise<{ deliveredRecords: number; failedByClass: Record<string, number> }> {
  // The last batches' rows may still be in the accountant's buffer when the ledger settles.
  let facts = await deliveryRecordsOf(fx, d.drainId);
  for (let deadline = Date.now() + 10_000; facts.deliveredRecords < d.produced.length && Date.now() < deadline; ) {
    await sleep(200);
    facts = await deliveryRecordsOf(fx, d.drainId);
  }
  const copies = [...receivedRecordIds(fx.receiver.accepted(), d.path).values()].reduce((a, b) => a + b, 0);
  expect(facts.deliveredRecords).toBeGreaterThanOrEqual(d.produced.length);
  expect(facts.deliveredRecords).toBeLessThanOrEqual(copies);
  return facts;
}

/** SIGTERM after the fault: the process must still stop cleanly (exit 0). */
export async function expectGracefulStop(w: LogdrainProcess): Promise<void> {
  w.kill('SIGTERM');
  const { code, signal } = await w.exited;
  expect({ code, signal, stderr: w.stderr.slice(-5) }).toMatchObject({ code: 0, signal: null });
}

/** Error-level log lines a worker wrote (a crash of the process would show here, and in its exit). */
export const errorLines = (w: LogdrainProcess) => w.lines.filter((l) => typeof l.level === 'number' && l.level >= 50);

/** On a failed test, prints the worker's last log lines: what it was doing when the fault bit. */
export function dumpLogOnFailure(w: LogdrainProcess, lines = 30): void {
  onTestFailed(() => console.info(`worker ${w.child.pid}'s last log lines:\n${w.lines.slice(-lines).map((l) => JSON.stringify(l)).join('\n')}\n${w.stderr.slice(-40).join('\n')}`));
}
