/**
 * Delivers ready batches: encode (a new batchId per attempt) -> gzip -> sign
 * (http drains) -> POST -> classify -> account.
 *
 * A live batch is retried with backoff a few times (`parkAfterAttempts`);
 * if it still fails, its records are parked in the durable backlog and the
 * drain switches to parking, so a sick destination holds no partition and
 * no healthy drain waits for it (ARCHITECTURE invariant 2). The backlog pump
 * then probes the drain with single attempts (`deliverOnce`). A final
 * failure (a 4xx other than 408/429, a redirect, an SSRF refusal) drops the
 * records into a `dropped` delivery record with the reason. Each drain has
 * its own concurrency limit. A batch's tickets are released only once the
 * delivery record saying what happened to it is durable.
 */
import { constants as zlib } from 'node:zlib';
import pLimit, { type LimitFunction } from 'p-limit';
import { newId } from '../model/ids.js';
import type { ReadyBatch } from '../batch/batcher.js';
import { SCHEMA_URL } from '../encode/encoder.js';
import { gzipOnce } from '../encode/shared-encoding.js';
import { gzipBody } from '../encode/compression.js';
import { signBatch } from '../sign/standard-webhooks.js';
import type { Accountant } from '../account/accountant.js';
import { droppedEntry, parkedRecords, successEntry, type AttemptResult } from '../account/entries.js';
import type { AttemptObserver } from '../account/drain-health.js';
import { DELIVERY_RETENTION_MS, type AttemptOutcome, type DeliveryRecord } from '../model/delivery.js';
import { scrubExcerpt } from '../shape/builtin-scrub.js';
import type { PipelineEvents } from '../telemetry/events.js';
import type { Logger } from '../telemetry/logger.js';
import type { Transport, TransportResult } from './transport.js';
import { backoffMs } from './backoff.js';
import { classifyTransportError, isRetryableClass, outcomeOfStatus } from './outcome.js';

export const EXCERPT_MAX_BYTES = 1024;
export const USER_AGENT = 'logdrain/0.1';

export interface DelivererOptions {
  transport: Transport;
  accountant: Accountant;
  events: PipelineEvents;
  logger: Logger;
  retry: { baseMs: number; maxMs: number };
  bufferHorizonMs: number;
  concurrencyPerDrain?: number;
  gzipLevel?: number;
  /** Failed attempts of a live batch before its records are parked. */
  parkAfterAttempts?: number;
  /** Called as a failing batch's records start going to the backlog; the answer is called once they are written. */
  onParking?: (drainId: string) => () => void;
  observer?: AttemptObserver;
}

export interface Deliverer {
  /** A live batch: retried, then parked or dropped; tickets released once accounted. */
  submit(batch: ReadyBatch): Promise<void>;
  /**
   * Takes back the drain's submitted batches still waiting for a concurrency slot, in the order
   * they were submitted: they will not be sent, and their tickets are the caller's to release.
   */
  withdrawQueued(drainId: string): ReadyBatch[];
  /** One attempt, accounted (the heartbeat's). */
  deliverOnce(batch: ReadyBatch, attempt: number): Promise<AttemptResult>;
  /** One attempt under the drain's concurrency limit, not accounted: the caller records it (the backlog pump, with the rows it unparks). */
  attemptOnce(batch: ReadyBatch, attempt: number): Promise<AttemptResult>;
  /** Resolves when every submitted batch has finished. */
  idle(): Promise<void>;
  /** Stops retrying: batches still retrying are abandoned unaccounted, to be re-read after restart. */
  abandonRetries(): void;
  /** Live batches being sent or retried now. */
  readonly inFlight: number;
}

export function createDeliverer(opts: DelivererOptions): Deliverer {
  const limits = new Map<string, LimitFunction>();
  const concurrency = opts.concurrencyPerDrain ?? 4;
  const level = opts.gzipLevel ?? zlib.Z_BEST_SPEED;
  const parkAfter = opts.parkAfterAttempts ?? 3;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];
  let abandoned = false;
  const wakeSleepers = new Set<() => void>();
  /** Submitted batches waiting for their drain's concurrency slot, by drain, in submission order. */
  const waiting = new Map<string, Set<ReadyBatch>>();

  const limitFor = (drainId: string): LimitFunction => {
    let l = limits.get(drainId);
    if (!l) limits.set(drainId, (l = pLimit(concurrency)));
    return l;
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wakeSleepers.delete(done);
        resolve();
      }
      wakeSleepers.add(done);
    });

  async function attempt(batch: ReadyBatch, n: number): Promise<AttemptResult> {
    const { plan } = batch;
    const drain = plan.drain;
    // Tenancy (ARCHITECTURE invariant 3): asserted on every batch before it leaves.
    if (batch.resource['svc.org.id'] !== drain.orgId || batch.resource['service.namespace'] !== drain.orgId) {
      throw new Error(`tenancy violation: batch of ${batch.resource['svc.org.id']} for a drain of another organization`);
    }
    const batchId = n === 1 && batch.batchId ? batch.batchId : newId();
    const body = plan.encoder.encode({ batchId, resource: batch.resource, resourceJson: batch.resourceJson, entries: batch.entries });
    // Drains sharing one body (encode/shared-encoding.ts) share its gzip.
    const compressed = await gzipOnce(body, level, gzipBody);
    const headers: Record<string, string> = {
      ...plan.headers,
      'content-type': plan.encoder.contentType,
      'content-encoding': 'gzip',
      'user-agent': USER_AGENT,
      'x-svc-schema': SCHEMA_URL,
      'x-svc-batch-id': batchId,
    };
    if (plan.signingKeys.length > 0) Object.assign(headers, signBatch(plan.signingKeys, batchId, body));
    const bodyBytes = body.length;
    // Compressed and signed: nothing reads the body any more.
    plan.encoder.recycle?.(body);
    const startedAt = new Date();
    const result = await opts.transport.post({ url: plan.url, headers, body: compressed });
    const outcome = outcomeOf(result, plan.encoder);
    let scrubHits = 0;
    for (const e of batch.entries) scrubHits += e.scrubHits;
    const row: DeliveryRecord = {
      id: newId(),
      orgId: drain.orgId,
      drainId: drain.id,
      batchId,
      kind: batch.kind,
      attempt: n,
      recordCount: batch.entries.length,
      bytes: bodyBytes,
      bytesCompressed: compressed.length,
      latencyMs: result.latencyMs,
      ok: outcome.status === 'success',
      scrubHits,
      startedAt,
      expiresAt: new Date(startedAt.getTime() + DELIVERY_RETENTION_MS),
      firstRecordId: batch.entries[0]?.id,
      lastRecordId: batch.entries[batch.entries.length - 1]?.id,
    };
    if (result.kind === 'response') {
      row.statusCode = result.statusCode;
      if (result.body.length > 0) row.responseExcerpt = excerpt(result.body, Object.values(plan.headers));
    }
    if (outcome.status !== 'success' || outcome.errorClass) row.errorClass = outcome.errorClass;
    // A test batch is the customer's own check of the destination: it does not move the drain's state.
    if (batch.kind !== 'test') opts.observer?.attempted(drain, outcome.status === 'success');
    if (opts.logger.isLevelEnabled('debug')) opts.logger.debug({ event: 'deliver.attempt', drainId: drain.id, batchId, kind: batch.kind, attempt: n, records: batch.entries.length, status: outcome.status, errorClass: row.errorClass, latencyMs: result.latencyMs }, 'delivery attempt');
    opts.events.batchSent({
      drainType: drain.type,
      kind: batch.kind,
      outcome: outcome.status === 'success' ? 'ok' : outcome.status === 'retryable' ? 'retry' : 'dropped',
      errorClass: row.errorClass,
      records: batch.entries.length,
      bytes: bodyBytes,
      bytesCompressed: compressed.length,
      latencyMs: result.latencyMs,
    });
    return { outcome, row };
  }

  /** Accounts a successful attempt: its row, the hourly counts, the quota usage. */
  function accountSuccess(batch: ReadyBatch, r: AttemptResult): Promise<void> {
    return opts.accountant.record(successEntry(batch, r));
  }

  async function deliverOnce(batch: ReadyBatch, n: number): Promise<AttemptResult> {
    const r = await attempt(batch, n);
    if (r.outcome.status === 'success') await accountSuccess(batch, r);
    else await opts.accountant.record({ deliveries: [r.row] });
    return r;
  }

  /**
   * Attempts until the batch is delivered, dropped or parked. A success's accounting is returned
   * unawaited (`accounted`): the drain's concurrency slot bounds POSTs, and holding it through the
   * accountant's flush (100 ms or more) capped a drain at a few small batches a second, which is
   * all a drain gets when records of thousands of agents make every batch small.
   */
  async function deliver(batch: ReadyBatch): Promise<{ accounted: Promise<void> } | void> {
    const firstAt = Date.now();
    const drainId = batch.plan.drain.id;
    for (let n = 1; ; n++) {
      let r: AttemptResult;
      try {
        r = await attempt(batch, n);
      } catch (e) {
        // Only a programming error lands here (the transport returns failures as values).
        opts.logger.error({ event: 'deliver.bug', drainId, err: (e as Error).message }, 'delivery attempt threw');
        await drop(batch, 'internal', n + 1);
        return;
      }
      const { outcome, row } = r;
      if (outcome.status === 'success') return { accounted: accountSuccess(batch, r).then(() => release(batch)) };
      const expired = Date.now() - firstAt >= opts.bufferHorizonMs;
      if (outcome.status === 'failure' || expired || !isRetryableClass(outcome.errorClass)) {
        await opts.accountant.record({ deliveries: [row] });
        await drop(batch, expired ? 'horizon' : outcome.errorClass, n + 1);
        return;
      }
      if (n >= parkAfter && batch.kind === 'batch') {
        // Failing for long: park durably and free the partition; the backlog pump takes over.
        const landed = opts.onParking?.(drainId);
        await opts.accountant.record({ deliveries: [row], backlog: parkedRecords(batch) });
        landed?.();
        opts.logger.info({ event: 'deliver.parked', drainId, records: batch.entries.length, errorClass: outcome.errorClass }, 'parked a failing batch');
        release(batch);
        return;
      }
      // The attempt row is written now, without waiting: it documents, it does not account.
      void opts.accountant.record({ deliveries: [row] });
      const wait = backoffMs(n, opts.retry, outcome.retryAfterMs);
      opts.logger.debug({ event: 'deliver.retry', drainId, attempt: n, errorClass: outcome.errorClass, waitMs: wait }, 'retrying batch');
      await sleep(Math.min(wait, Math.max(0, firstAt + opts.bufferHorizonMs - Date.now())));
      if (abandoned) return;
      if (batch.stillCurrent && !(await batch.stillCurrent().catch(() => true))) {
        await drop(batch, 'superseded', n + 1);
        return;
      }
    }
  }

  async function drop(batch: ReadyBatch, reason: string, attemptNo: number): Promise<void> {
    const drain = batch.plan.drain;
    await opts.accountant.record(droppedEntry(drain, batch.entries.map((e) => e.id), reason, attemptNo));
    opts.events.recordsDropped(drain.type, reason, batch.entries.length);
    release(batch);
  }

  function release(batch: ReadyBatch): void {
    for (const t of batch.tickets) t.release();
  }

  return {
    submit(batch) {
      inFlight++;
      const drainId = batch.plan.drain.id;
      let queue = waiting.get(drainId);
      if (queue === undefined) waiting.set(drainId, (queue = new Set()));
      queue.add(batch);
      const started = () => {
        const q = waiting.get(drainId);
        // Gone from the queue: withdrawn (withdrawQueued), not to be sent.
        if (q === undefined || !q.delete(batch)) return undefined;
        if (q.size === 0) waiting.delete(drainId);
        return deliver(batch);
      };
      return limitFor(drainId)(started).then((done) => done?.accounted).finally(() => {
        inFlight--;
        if (inFlight === 0) {
          const w = idleWaiters;
          idleWaiters = [];
          for (const resolve of w) resolve();
        }
      });
    },
    withdrawQueued(drainId) {
      const queue = waiting.get(drainId);
      if (queue === undefined) return [];
      waiting.delete(drainId);
      return [...queue];
    },
    deliverOnce: (batch, n) => limitFor(batch.plan.drain.id)(() => deliverOnce(batch, n)),
    attemptOnce: (batch, n) => limitFor(batch.plan.drain.id)(() => attempt(batch, n)),
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    abandonRetries() {
      abandoned = true;
      for (const wake of [...wakeSleepers]) wake();
    },
    get inFlight() {
      return inFlight;
    },
  };
}

function outcomeOf(result: TransportResult, encoder: ReadyBatch['plan']['encoder']): AttemptOutcome {
  if (result.kind === 'error') {
    const errorClass = classifyTransportError(result.error);
    return isRetryableClass(errorClass) ? { status: 'retryable', errorClass } : { status: 'failure', errorClass };
  }
  const ra = result.headers['retry-after'];
  const outcome = outcomeOfStatus(result.statusCode, Array.isArray(ra) ? ra[0] : ra);
  if (outcome.status === 'success' && encoder.rejectedRecords) {
    const ct = result.headers['content-type'];
    // Spec 01 part 4.2: refused records make a delivered batch `partial`; zero refused is a plain ok.
    const rejected = encoder.rejectedRecords(result.body, Array.isArray(ct) ? ct[0] : ct);
    if (rejected > 0) return { status: 'success', errorClass: 'partial', rejected };
  }
  return outcome;
}

/** At most 1 KB of the answer, cut on a character boundary, with secrets scrubbed. */
function excerpt(body: Buffer, secrets: readonly string[]): string {
  const text = scrubExcerpt(body.subarray(0, EXCERPT_MAX_BYTES * 4).toString('utf8'), secrets);
  let cut = Buffer.from(text, 'utf8').subarray(0, EXCERPT_MAX_BYTES).toString('utf8');
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return cut;
}
