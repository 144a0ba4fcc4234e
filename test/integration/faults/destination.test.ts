/**
 * Destination faults: a loopback HTTPS destination that answers
 * 500 for a while, 429 with Retry-After, hangs past DELIVERY_TIMEOUT_MS,
 * resets connections, trickles its answer, answers 2xx with a 10 MB or an
 * endless body, or answers 500 forever. Each ends with the ledger (every
 * produced record received, or named by a `dropped` delivery record with its
 * reason), the delivery records' error classes, and a worker still ready.
 *
 * Runs the in-process app (`start`: API + worker on the embedded queue) with
 * small retry, park and horizon settings so each fault plays out in seconds.
 * Records go to org_globex (enterprise: ten drains), each test's drain is
 * deleted after it, and a control drain at a healthy path stays throughout:
 * a sick destination must never hold up a healthy one.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { waitFor, type TestApp } from '../../helpers/app.js';
import type { HttpsReceiver } from '../../helpers/receiver.js';
import { startReceiverApp, type ReceiverApp } from '../../helpers/receiver-app.js';
import { expectNothingLost, receivedRecordIds, settledLedger, type LedgerReport } from '../../helpers/ledger.js';
import { ingest, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_globex/log-drains';
const T = 'lk_globex_manage';
const TIMEOUT_MS = 2000;

type Fault =
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: Buffer }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'trickle'; headersAfterMs: number; chunks: number; everyMs: number }
  | { kind: 'body'; bytes: number }
  | { kind: 'endless' }
  | { kind: 'truncated' }
  | { kind: 'huge-headers' };

/** What the scripted destination did with a streamed body: bytes written before the client hung up. */
interface Stream {
  written: number;
  finished: boolean;
  closed: Promise<void>;
}

/**
 * A scripted destination on the shared receiver: each batch request to a path takes the next fault
 * of that path's script (or its `forever` fault); with the script used up it answers 200.
 */
function scriptedDestination(receiver: HttpsReceiver) {
  const scripts = new Map<string, { faults: Fault[]; forever?: Fault }>();
  const streams: Stream[] = [];
  const apply = (f: Fault, res: ServerResponse): boolean => {
    switch (f.kind) {
      case 'status':
        res.writeHead(f.status, { 'content-type': 'text/plain', ...f.headers }).end(f.body ?? `scripted ${f.status}`);
        return true;
      case 'hang':
        return true; // never answers; the client gives up at DELIVERY_TIMEOUT_MS
      case 'reset': {
        // A TCP RST: on a TLS connection the TCP socket is the TLS socket's parent (resetAndDestroy
        // refuses a TLS handle); a plain destroy (FIN, no close_notify) if the layout ever differs.
        const tls = res.socket as (typeof res.socket & { _parent?: { resetAndDestroy?: () => void } }) | null;
        if (typeof tls?._parent?.resetAndDestroy === 'function') tls._parent.resetAndDestroy();
        else tls?.destroy();
        return true;
      }
      case 'trickle': {
        let sent = 0;
        const next = () => {
          if (res.destroyed) return;
          if (sent === 0) res.writeHead(200, { 'content-type': 'application/json' });
          if (sent === f.chunks) return void res.end('{}');
          res.write(' ');
          sent++;
          setTimeout(next, f.everyMs);
        };
        setTimeout(next, f.headersAfterMs);
        return true;
      }
      case 'body':
        res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(f.bytes, 'x'));
        return true;
      case 'truncated':
        // 2xx promised with 1,000 bytes, ten sent, connection dropped: the answer is incomplete.
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
        res.write('0123456789', () => res.destroy());
        return true;
      case 'huge-headers':
        res.writeHead(200, Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-filler-${i}`, 'h'.repeat(1000)]))).end('{}');
        return true;
      case 'endless': {
        // 64 KB chunks for as long as the client reads, up to 1 GB: a client that buffered whole answers would time out.
        const chunk = Buffer.alloc(64 * 1024, 'y');
        let resolveClosed!: () => void;
        const s: Stream = { written: 0, finished: false, closed: new Promise((r) => (resolveClosed = r)) };
        streams.push(s);
        res.on('close', () => resolveClosed());
        res.writeHead(200, { 'content-type': 'text/plain' });
        const pump = () => {
          while (!res.destroyed && s.written < 1024 ** 3) {
            s.written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) {
            s.finished = true;
            res.end();
          }
        };
        pump();
        return true;
      }
    }
  };
  const verifyAnswers = new Map<string, Buffer>();
  receiver.respondWith((r, res) => {
    if (r.headers['x-svc-verify']) {
      const answer = verifyAnswers.get(r.path);
      if (!answer) return false;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(answer);
      return true;
    }
    const script = scripts.get(r.path);
    const fault = script?.faults.shift() ?? script?.forever;
    return fault ? apply(fault, res) : false;
  });
  return {
    streams,
    /** Answers verification challenges at `path` with this body instead of the echo. */
    answerVerify(path: string, body: Buffer) {
      verifyAnswers.set(path, body);
    },
    script(path: string, faults: Fault[], forever?: Fault) {
      scripts.set(path, { faults: [...faults], ...(forever ? { forever } : {}) });
    },
  };
}

/** Small retry, park and poll settings so each fault plays out in seconds; org_globex (enterprise: ten drains). */
const startFaultApp = (env: Record<string, string> = {}): Promise<ReceiverApp> =>
  startReceiverApp({
    DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), RETRY_BASE_MS: '50', RETRY_MAX_MS: '200', PARK_AFTER_ATTEMPTS: '3', BACKLOG_POLL_MS: '100', ...env,
  }, { orgId: 'org_globex', token: T });

/** Records of org_globex's agent, ingested through the API (the embedded queue): their ids. */
async function produce(app: TestApp, n: number): Promise<string[]> {
  const sent = records(n, { orgId: 'org_globex', agentId: 'agt_globex', agentName: 'globex-bot' });
  await ingest(app, sent, T);
  return sent.map((r) => r.id);
}

interface Attempt { ok: boolean; kind: string; attempt: number; statusCode?: number; errorClass?: string; latencyMs?: number; responseExcerpt?: string; startedAt: string; recordCount?: number; firstRecordId?: string }

/** Every delivery record of a drain, oldest first. */
async function attemptsOf(app: TestApp, drainId: string): Promise<Attempt[]> {
  const rows = (await app.request('GET', `${ORG}/${drainId}/deliveries?limit=100`, { token: T })).body.deliveries as Attempt[];
  return rows.reverse();
}

/** Every delivery record of a drain, oldest first, once one of its batches was delivered (rows land after the answer). */
const attemptsUntilDelivered = (app: TestApp, drainId: string): Promise<Attempt[]> =>
  waitFor(async () => {
    const rows = await attemptsOf(app, drainId);
    return rows.some((a) => a.kind === 'batch' && a.ok) ? rows : undefined;
  }, { what: 'a delivered batch row' });

const classes = (rows: Attempt[]) => rows.filter((r) => !r.ok && r.kind === 'batch').map((r) => r.errorClass);

/**
 * The ledger of one drain. Received means answered 2xx by the destination: `accepted()`, except for
 * an answer that never finishes (the endless body), whose 200 went out before its body did.
 */
async function ledger(app: TestApp, receiver: HttpsReceiver, drainId: string, path: string, produced: string[], answered = () => receiver.accepted()): Promise<LedgerReport> {
  const report = await settledLedger(() => ({ drainId, produced, received: receivedRecordIds(answered(), path), sql: app.store.sql, label: path }));
  expectNothingLost(report);
  return report;
}

async function expectReady(app: TestApp): Promise<void> {
  expect((await fetch(`${app.base}/readyz`)).status).toBe(200);
}

describe('destination faults', () => {
  let ctx: ReceiverApp;
  let app: TestApp;
  let receiver: HttpsReceiver;
  let destination: ReturnType<typeof scriptedDestination>;
  let control: string;
  const controlProduced: string[] = [];

  beforeAll(async () => {
    ctx = await startFaultApp();
    ({ app, receiver } = ctx);
    destination = scriptedDestination(receiver);
    control = await ctx.verifiedDrain({ name: 'control', endpoint: `${receiver.url}/control` }, { keep: true });
  });
  afterAll(() => ctx?.stop());
  /** The control drain stays; each test's own drain goes. */
  afterEach(() => ctx.deleteDrains());

  /** A fresh drain at `path` with its fault script, and `n` records produced for it (and the control drain). */
  async function underFault(path: string, faults: Fault[], n = 20, forever?: Fault) {
    destination.script(path, faults, forever);
    const drainId = await ctx.verifiedDrain({ name: path.slice(1), endpoint: `${receiver.url}${path}` });
    const produced = await produce(app, n);
    controlProduced.push(...produced);
    return { drainId, produced };
  }

  it('500 for a while, then 2xx: retried, parked, delivered from the backlog; http_5xx attempts recorded', async () => {
    const five = { kind: 'status', status: 500 } as const;
    const { drainId, produced } = await underFault('/five-hundred', [five, five, five, five]);
    const report = await ledger(app, receiver, drainId, '/five-hundred', produced);
    expect(report.received).toBe(produced.length);
    expect(report.droppedByReason).toEqual({});
    const rows = await attemptsUntilDelivered(app, drainId);
    expect(classes(rows)).toEqual(['http_5xx', 'http_5xx', 'http_5xx', 'http_5xx']);
    expect(rows.filter((r) => r.errorClass === 'http_5xx').every((r) => r.statusCode === 500 && r.responseExcerpt === 'scripted 500')).toBe(true);
    await expectReady(app);
  });

  it('429 with Retry-After: 2 waits at least two seconds before the next attempt (from the delivery records)', async () => {
    const { drainId, produced } = await underFault('/too-many', [{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }], 5);
    const report = await ledger(app, receiver, drainId, '/too-many', produced);
    expect(report.received).toBe(produced.length);
    const rows = (await attemptsUntilDelivered(app, drainId)).filter((a) => a.kind === 'batch');
    const refused = rows.find((r) => r.statusCode === 429)!;
    expect(refused).toMatchObject({ ok: false, errorClass: 'http_4xx' });
    // The same records' next attempt: a 429 with Retry-After opens the drain's circuit, so the batch
    // is parked and its records go out in the one probe batch sent from the backlog once the time is up.
    const next = rows.find((r) => r.ok && r.firstRecordId === refused.firstRecordId)!;
    expect(rows.filter((r) => Date.parse(r.startedAt) > Date.parse(refused.startedAt) && Date.parse(r.startedAt) < Date.parse(next.startedAt))).toEqual([]);
    // RETRY_MAX_MS is 200 ms here: only Retry-After can account for a gap this long.
    expect(Date.parse(next.startedAt) - Date.parse(refused.startedAt)).toBeGreaterThanOrEqual(2000);
    await expectReady(app);
  });

  it('hangs past DELIVERY_TIMEOUT_MS, then recovers: timeout attempts, then delivered', async () => {
    const { drainId, produced } = await underFault('/hang-then-ok', [{ kind: 'hang' }, { kind: 'hang' }]);
    const report = await ledger(app, receiver, drainId, '/hang-then-ok', produced);
    expect(report.droppedByReason).toEqual({});
    const rows = await attemptsUntilDelivered(app, drainId);
    const timeouts = rows.filter((r) => r.errorClass === 'timeout');
    expect(timeouts).toHaveLength(2);
    for (const t of timeouts) {
      expect(t.statusCode).toBeUndefined();
      expect(t.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    }
    await expectReady(app);
  });

  it('resets connections for a while: connect attempts, parked, then delivered', async () => {
    const { drainId, produced } = await underFault('/reset', [{ kind: 'reset' }, { kind: 'reset' }, { kind: 'reset' }, { kind: 'reset' }]);
    const report = await ledger(app, receiver, drainId, '/reset', produced);
    expect(report.droppedByReason).toEqual({});
    const rows = await attemptsUntilDelivered(app, drainId);
    expect(classes(rows)).toEqual(['connect', 'connect', 'connect', 'connect']);
    await expectReady(app);
  });

  it('answers very slowly but within the timeout: delivered on the first attempt', async () => {
    // Headers after 200 ms, then a byte every 100 ms for 400 ms: about 600 ms of a 2000 ms budget (the
    // margin is for a loaded machine: this process runs both the client and the trickling server).
    const { drainId, produced } = await underFault('/slow', [{ kind: 'trickle', headersAfterMs: 200, chunks: 4, everyMs: 100 }]);
    await ledger(app, receiver, drainId, '/slow', produced, () => receiver.batches());
    const rows = (await attemptsUntilDelivered(app, drainId)).filter((a) => a.kind === 'batch');
    expect(rows[0]).toMatchObject({ ok: true, statusCode: 200, attempt: 1 });
    expect(rows[0]!.errorClass).toBeUndefined();
    expect(rows[0]!.latencyMs).toBeGreaterThanOrEqual(550);
    await expectReady(app);
  });

  it('answers 2xx with a 10 MB body: delivered, at most 1 KB kept', async () => {
    const { drainId, produced } = await underFault('/ten-mb', [{ kind: 'body', bytes: 10 * 1024 * 1024 }]);
    // Counted as received when the request arrives: the client stops reading the answer after its
    // bounded prefix, so whether the server's 10 MB write ever finishes depends on socket buffers.
    await ledger(app, receiver, drainId, '/ten-mb', produced, () => receiver.batches());
    const row = (await attemptsUntilDelivered(app, drainId)).find((a) => a.kind === 'batch')!;
    expect(row).toMatchObject({ ok: true, statusCode: 200 });
    expect(Buffer.byteLength(row.responseExcerpt ?? '')).toBeLessThanOrEqual(1024);
    expect(row.responseExcerpt).toMatch(/^x+$/);
    await expectReady(app);
  });

  it('answers 2xx with an endless body: delivered at once, and the client stops reading', async () => {
    const { drainId, produced } = await underFault('/endless', [{ kind: 'endless' }]);
    await ledger(app, receiver, drainId, '/endless', produced, () => receiver.batches());
    const row = (await attemptsUntilDelivered(app, drainId)).find((a) => a.kind === 'batch')!;
    expect(row).toMatchObject({ ok: true, statusCode: 200 });
    expect(row.latencyMs).toBeLessThan(TIMEOUT_MS);
    const stream = destination.streams.at(-1)!;
    await stream.closed;
    // The client hung up long before the gigabyte: it read a bounded prefix, not the answer.
    expect(stream.finished).toBe(false);
    expect(stream.written).toBeLessThan(256 * 1024 * 1024);
    await expectReady(app);
  });

  it('answers 2xx but drops the connection mid-body, or with 100 KB of headers: not counted delivered, retried, delivered', async () => {
    const { drainId, produced } = await underFault('/broken-answer', [{ kind: 'truncated' }, { kind: 'huge-headers' }]);
    const report = await ledger(app, receiver, drainId, '/broken-answer', produced);
    expect(report.droppedByReason).toEqual({});
    const rows = (await attemptsUntilDelivered(app, drainId)).filter((a) => a.kind === 'batch');
    // The destination saw the first two requests, but no complete answer came back: failed attempts, never `ok`.
    expect(rows.map((r) => r.ok)).toEqual([false, false, true]);
    expect(classes(rows)).toEqual(['connect', 'connect']);
    await expectReady(app);
  });

  it('answers with NUL bytes and invalid UTF-8 (500, then 200): the excerpts are stored, nothing sticks', async () => {
    const hostile = Buffer.concat([Buffer.from('err\u0000or '), Buffer.from([0xff, 0xfe, 0x00, 0xc3]), Buffer.from(' end')]);
    const { drainId, produced } = await underFault('/nul-answer', [{ kind: 'status', status: 500, body: hostile }, { kind: 'status', status: 200, body: hostile }]);
    await ledger(app, receiver, drainId, '/nul-answer', produced);
    const rows = (await attemptsUntilDelivered(app, drainId)).filter((a) => a.kind === 'batch');
    expect(rows.map((r) => [r.statusCode, r.errorClass])).toEqual([[500, 'http_5xx'], [200, undefined]]);
    for (const r of rows) {
      expect(r.responseExcerpt).not.toContain('\u0000');
      expect(r.responseExcerpt).toMatch(/^err.or .* end$/);
    }
    await expectReady(app);
  });

  it('answers a verification challenge with NUL bytes: verification fails, its record is stored', async () => {
    destination.answerVerify('/verify-nul', Buffer.from('tok\u0000en'));
    const res = await app.request('POST', ctx.drains, { token: T, body: { name: 'verify-nul', type: 'http', endpoint: `${receiver.url}/verify-nul` } });
    expect(res.status).toBe(201);
    ctx.track(res.body.id);
    expect((await app.request('POST', `${ctx.drains}/${res.body.id}/verify`, { token: T })).status).toBe(202);
    const row = await waitFor(async () => (await attemptsOf(app, res.body.id)).find((a) => a.kind === 'verify'), { what: 'the verify row' });
    expect(row).toMatchObject({ ok: false, statusCode: 200, responseExcerpt: 'tok\uFFFDen' });
    expect((await app.request('GET', `${ctx.drains}/${res.body.id}`, { token: T })).body.state).toBe('pending_verification');
    await expectReady(app);
  });

  it('kept delivering to the healthy control drain through every fault', async () => {
    const report = await ledger(app, receiver, control, '/control', controlProduced);
    expect(report.received).toBe(controlProduced.length);
    expect(report.droppedByReason).toEqual({});
  });
});

describe('a destination answering 500 forever', () => {
  let ctx: ReceiverApp;

  beforeAll(async () => {
    ctx = await startFaultApp({ BUFFER_HORIZON_MS: '2000' });
    scriptedDestination(ctx.receiver).script('/always-500', [], { kind: 'status', status: 500 });
  });
  afterAll(() => ctx?.stop());

  it('parks the records, probes, and drops them at BUFFER_HORIZON_MS with reason horizon', async () => {
    const { app, receiver } = ctx;
    const drainId = await ctx.verifiedDrain({ name: 'always-500', endpoint: `${receiver.url}/always-500` });
    const produced = await produce(app, 20);
    const report = await ledger(app, receiver, drainId, '/always-500', produced);
    expect(report.received).toBe(0);
    expect(report.droppedByReason).toEqual({ horizon: produced.length });
    const rows = await attemptsOf(app, drainId);
    const failed = rows.filter((r) => r.kind === 'batch');
    expect(failed.length).toBeGreaterThanOrEqual(3);
    expect(failed.every((r) => !r.ok && r.errorClass === 'http_5xx' && r.statusCode === 500)).toBe(true);
    const dropped = rows.filter((r) => r.kind === 'dropped');
    expect(dropped.every((r) => r.errorClass === 'horizon')).toBe(true);
    expect(dropped.reduce((n, r) => n + (r.recordCount ?? 0), 0)).toBe(produced.length);
    // Nothing is left parked, and the worker is still serving.
    expect((await app.request('GET', `${ORG}/${drainId}`, { token: T })).body.health.backlog).toBe(0);
    await expectReady(app);
  });
});
