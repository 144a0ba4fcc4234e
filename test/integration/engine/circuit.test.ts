/**
 * The drain-wide brake against a real HTTPS receiver on loopback (docs/delivery.md, "The circuit"):
 *
 * - a destination answering 429 `Retry-After: 5` for 20 s gets, once the circuit is open, no more
 *   than one probe per five seconds, records arriving meanwhile are parked, and afterwards every
 *   record arrives exactly once, every attempt standing in the delivery records;
 * - consecutive 5xx open the circuit, a failed probe opens it again for longer, a delivered probe
 *   closes it;
 * - the read form (`circuit`, `throttledUntil`, `health.circuitOpenings24h`), the audit
 *   (`logs.drain.circuit_opened` / `circuit_closed`) and the metrics follow.
 *
 * Runs as `start` (embedded) and as a `serve` + `worker` on Postgres and Kafka (kafka-postgres).
 * No sleeps: every wait polls for the condition it needs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceivedRequest } from '../../../src/devtools/https-receiver.js';
import { waitFor, type TestApp } from '../../helpers/app.js';
import type { HttpsReceiver } from '../../helpers/receiver.js';
import { startReceiverApp, type ReceiverApp } from '../../helpers/receiver-app.js';
import { expectNothingLost, receivedRecordIds, settledLedger } from '../../helpers/ledger.js';
import { ingest, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const AUDIT = '/admin/orgs/org_acme/log-drains-audit';
const T = 'lk_acme_manage';
const RETRY_AFTER_S = 5;
const THROTTLE_MS = 20_000;

interface Sample { name: string; labels: Record<string, string>; value: number }

function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

describe('drain circuit', () => {
  let ctx: ReceiverApp;
  let app: TestApp;
  let receiver: HttpsReceiver;
  /** Per path: until when batches are answered 429 with Retry-After (set on the first batch). */
  const throttledUntil = new Map<string, number>();
  const throttling = new Set<string>();
  /** Per path: answer batches 500 while set. */
  const failing = new Set<string>();

  beforeAll(async () => {
    ctx = await startReceiverApp({
      RETRY_BASE_MS: '50', RETRY_MAX_MS: '200', PARK_AFTER_ATTEMPTS: '3', BACKLOG_POLL_MS: '100',
      CIRCUIT_OPEN_AFTER_FAILURES: '4', CIRCUIT_OPEN_BASE_MS: '1000', CIRCUIT_OPEN_MAX_MS: '30000',
    });
    ({ app, receiver } = ctx);
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify']) return false;
      if (throttling.has(r.path)) {
        if (!throttledUntil.has(r.path)) throttledUntil.set(r.path, r.receivedAt + THROTTLE_MS);
        if (r.receivedAt < throttledUntil.get(r.path)!) {
          res.writeHead(429, { 'retry-after': String(RETRY_AFTER_S), 'content-type': 'text/plain' }).end('slow down');
          return true;
        }
      }
      if (failing.has(r.path)) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('down');
        return true;
      }
      return false;
    });
  });
  afterAll(() => ctx?.stop());

  const read = async (id: string) => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;
  const audit = async (id: string, action: string) =>
    (await app.request('GET', `${AUDIT}?drainId=${id}&action=${action}`, { token: T })).body.entries as { at: string; actor: unknown; details: Record<string, unknown> }[];
  const metrics = async () => parseExposition(await (await fetch(app.workerMetricsUrl)).text());
  const metric = (samples: Sample[], name: string, where: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
  const batchesAt = (path: string): ReceivedRequest[] => receiver.batches().filter((r) => r.path === path);
  async function produce(n: number): Promise<string[]> {
    const sent = records(n);
    await ingest(app, sent);
    return sent.map((r) => r.id);
  }
  async function ledger(drainId: string, path: string, produced: string[]) {
    const report = await settledLedger(() => ({ drainId, produced, received: receivedRecordIds(receiver.accepted(), path), sql: app.store.sql, label: path }), 60_000);
    expectNothingLost(report);
    expect(report.received).toBe(produced.length);
    expect(report.duplicates).toBe(0);
    expect(report.droppedByReason).toEqual({});
    return report;
  }
  /** The drain's batch delivery records: status codes and records in delivered ones. */
  const deliveryRows = (drainId: string) =>
    app.store.sql.query<{ ok: boolean; status_code: number | null; record_count: number }>(
      "select ok, status_code, record_count from deliveries where drain_id = $1 and kind = 'batch'",
      [drainId],
    );

  it('429 with Retry-After: at most one probe per interval while open, then every record exactly once', async () => {
    const path = '/throttled';
    throttling.add(path);
    const drainId = await ctx.verifiedDrain({ name: 'throttled', endpoint: `${receiver.url}${path}` });
    const openingsBefore = metric(await metrics(), 'logdrain_drain_circuit_openings_total', { drain_type: 'http' });
    const produced = await produce(20);

    // The first 429 opens the circuit: the read form shows it, with the instant the probe may go.
    const open = await waitFor(async () => {
      const d = await read(drainId);
      return d.circuit === 'open' ? d : undefined;
    }, { what: 'the circuit open', timeoutMs: 30_000 });
    expect(Date.parse(open.throttledUntil)).toBeGreaterThan(throttledUntil.get(path)! - THROTTLE_MS);
    await waitFor(async () => metric(await metrics(), 'logdrain_drain_circuits_open', { drain_type: 'http', state: 'open' }) >= 1, { what: 'the open circuit gauge' });

    // Records arriving while it is open are parked, not sent: more waves, one per probe seen.
    produced.push(...(await produce(10)));
    const firstAt = batchesAt(path)[0]!.receivedAt;
    for (let probe = 1; probe <= 2; probe++) {
      await waitFor(() => batchesAt(path).filter((r) => r.receivedAt >= firstAt + 1000).length >= probe, { what: `probe ${probe}`, timeoutMs: 30_000 });
      produced.push(...(await produce(10)));
    }
    expect((await read(drainId)).health.backlog).toBeGreaterThan(0);

    await ledger(drainId, path, produced);
    const requests = batchesAt(path);
    const refused = requests.filter((r) => r.status === 429);
    // The batches already in flight when the first answer came (at most the drain's four slots),
    // then probes, one at a time, each at least Retry-After after the opening before it.
    const burst = refused.filter((r) => r.receivedAt < firstAt + 1000);
    const probes = refused.filter((r) => r.receivedAt >= firstAt + 1000);
    expect(burst.length).toBeGreaterThanOrEqual(1);
    expect(burst.length).toBeLessThanOrEqual(4);
    expect(probes.length).toBeGreaterThanOrEqual(2);
    let previous = firstAt;
    for (const p of probes) {
      expect(p.receivedAt - previous).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000 - 50);
      previous = p.receivedAt;
    }
    // After the throttle, the first accepted request is the one probe that closed the circuit:
    // nothing else was sent between the last refused probe and it.
    const afterLastRefused = requests.filter((r) => r.receivedAt > previous);
    expect(afterLastRefused[0]!.status).toBe(200);
    expect(afterLastRefused[0]!.receivedAt - previous).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000 - 50);

    // Every attempt is in the delivery records: each 429 the receiver sent, and the delivered records.
    const rows = await waitFor(async () => {
      const r = await deliveryRows(drainId);
      return r.filter((x) => x.ok).reduce((n, x) => n + x.record_count, 0) === produced.length ? r : undefined;
    }, { what: 'the delivery records of every record' });
    expect(rows.filter((r) => r.status_code === 429)).toHaveLength(refused.length);
    expect(rows.filter((r) => r.ok)).toHaveLength(requests.filter((r) => r.status === 200).length);

    // Closed again: read form, health, audit, metrics.
    const closed = await waitFor(async () => {
      const d = await read(drainId);
      return d.circuit === 'closed' ? d : undefined;
    }, { what: 'the circuit closed' });
    expect(closed.throttledUntil).toBeNull();
    const openings = 1 + probes.length;
    expect(closed.health.circuitOpenings24h).toBe(openings);
    expect(closed.health.hourly.reduce((n: number, p: { circuitOpenings: number }) => n + p.circuitOpenings, 0)).toBe(openings);
    const opened = await audit(drainId, 'logs.drain.circuit_opened');
    expect(opened).toHaveLength(openings);
    expect(opened.map((e) => e.details.reason).sort()).toEqual(['retry_after', ...probes.map(() => 'probe_failed')].sort());
    expect(opened.every((e) => JSON.stringify(e.actor) === JSON.stringify({ type: 'system', id: 'drain-circuit' }))).toBe(true);
    expect(await audit(drainId, 'logs.drain.circuit_closed')).toHaveLength(1);
    const after = await metrics();
    expect(metric(after, 'logdrain_drain_circuit_openings_total', { drain_type: 'http' }) - openingsBefore).toBe(openings);
    expect(metric(after, 'logdrain_drain_circuits_open', { drain_type: 'http' })).toBe(0);
    // Bounded labels: no drain or organization id on the circuit metrics (`role` is every series' default label).
    for (const s of after.filter((x) => x.name.startsWith('logdrain_drain_circuit'))) {
      expect(Object.keys(s.labels).filter((k) => k !== 'role').sort()).toEqual(s.name === 'logdrain_drain_circuits_open' ? ['drain_type', 'state'] : ['drain_type']);
    }
    await ctx.deleteDrains();
  }, 120_000);

  it('consecutive 5xx open it; a failed probe opens it again for longer; a delivered probe closes it', async () => {
    const path = '/down';
    const drainId = await ctx.verifiedDrain({ name: 'down', endpoint: `${receiver.url}${path}` });
    failing.add(path);
    const produced = await produce(10);
    // Three live attempts park the batch; the backlog's first attempt is the fourth failure in a row.
    const first = await waitFor(async () => (await audit(drainId, 'logs.drain.circuit_opened'))[0], { what: 'the circuit opened', timeoutMs: 30_000 });
    expect(first.details).toMatchObject({ reason: 'failures', failures: 4 });
    const second = await waitFor(async () => {
      const entries = await audit(drainId, 'logs.drain.circuit_opened');
      return entries.length >= 2 ? entries.find((e) => e.details.reason === 'probe_failed') : undefined;
    }, { what: 'the failed probe reopening it', timeoutMs: 30_000 });
    failing.delete(path);
    // Between the opening and the reopening: exactly one request, the probe, sent once the time was up.
    const firstUntil = Date.parse(first.details.openUntil as string);
    const between = batchesAt(path).filter((r) => r.receivedAt >= Date.parse(first.at) && r.receivedAt <= Date.parse(second.at));
    expect(between).toHaveLength(1);
    expect(between[0]!.receivedAt).toBeGreaterThanOrEqual(firstUntil - 50);
    // Longer: the reopening's backoff ceiling is twice the first's (each a draw from its upper half).
    const held = (e: typeof first) => Date.parse(e.details.openUntil as string) - Date.parse(e.details.openedAt as string);
    expect(held(first)).toBeGreaterThanOrEqual(500);
    expect(held(first)).toBeLessThanOrEqual(1000);
    expect(held(second)).toBeGreaterThanOrEqual(1000);
    expect(held(second)).toBeLessThanOrEqual(2000);

    await ledger(drainId, path, produced);
    await waitFor(async () => (await read(drainId)).circuit === 'closed', { what: 'the circuit closed' });
    const opened = await audit(drainId, 'logs.drain.circuit_opened');
    expect((await read(drainId)).health.circuitOpenings24h).toBe(opened.length);
    expect(await audit(drainId, 'logs.drain.circuit_closed')).toHaveLength(1);
    const rows = await deliveryRows(drainId);
    expect(rows.filter((r) => r.status_code === 503)).toHaveLength(batchesAt(path).filter((r) => r.status === 503).length);
    await ctx.deleteDrains();
  }, 120_000);
});
