/**
 * One attempt: a batch's request (request.ts) posted, its answer classified
 * into an outcome (outcome.ts), and the delivery row that documents it. No
 * retry and no accounting: the deliverer and the backlog pump decide what
 * follows (retry-policy.ts) and account it.
 */
import type { ReadyBatch } from '../batch/batcher.js';
import { DELIVERY_RETENTION_MS, type DeliveryRecord } from '../model/delivery.js';
import { newId } from '../model/ids.js';
import { scrubExcerpt } from '../shape/builtin-scrub.js';
import type { AttemptObserver } from '../drains/health.js';
import type { DrainCircuits } from './circuit.js';
import type { AttemptResult } from '../account/entries.js';
import type { PipelineEvents } from '../telemetry/events.js';
import type { Logger } from '../telemetry/logger.js';
import { outcomeOf } from './outcome.js';
import { batchRequest, encodeBatch, gzipBatch } from './request.js';
import { bodyBudget } from '../encode/body-budget.js';
import type { Transport } from './transport.js';

export const EXCERPT_MAX_BYTES = 1024;

export interface AttemptDeps {
  transport: Transport;
  events: PipelineEvents;
  logger: Logger;
  /** Gzip level of batch bodies. */
  level: number;
  observer?: AttemptObserver | undefined;
  /** The drain circuits (circuit.ts), told of every batch attempt's outcome. */
  circuits?: Pick<DrainCircuits, 'observe'> | undefined;
}

/** Attempt `n` of a batch; throws only on a programming error (the transport answers failures as values). */
export async function attemptBatch(deps: AttemptDeps, batch: ReadyBatch, n: number): Promise<AttemptResult> {
  const { plan } = batch;
  const drain = plan.drain;
  // Tenancy (ARCHITECTURE invariant 3): asserted on every batch before it leaves.
  if (batch.resource['svc.org.id'] !== drain.orgId || batch.resource['service.namespace'] !== drain.orgId) {
    throw new Error(`tenancy violation: batch of ${batch.resource['svc.org.id']} for a drain of another organization`);
  }
  const batchId = n === 1 && batch.batchId ? batch.batchId : newId();
  // The body exists from its encoding to its gzip: encoding waits for room in the process's budget (body-budget.ts).
  const budgeted = batch.bytes;
  const turn = bodyBudget.take(budgeted);
  if (turn) await turn;
  let request;
  try {
    const body = encodeBatch(batch, batchId);
    request = batchRequest(batch, batchId, body, await gzipBatch(body, deps.level));
  } finally {
    bodyBudget.give(budgeted);
  }
  const startedAt = new Date();
  const result = await deps.transport.post(request);
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
    bytes: request.bytes,
    bytesCompressed: request.body.length,
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
  if (batch.kind !== 'test') deps.observer?.attempted(drain, outcome.status === 'success');
  // The circuit judges the destination by the drain's records only (a heartbeat has its own lease and interval).
  if (batch.kind === 'batch') deps.circuits?.observe(drain, outcome, row.statusCode);
  if (deps.logger.isLevelEnabled('debug')) deps.logger.debug({ event: 'deliver.attempt', drainId: drain.id, batchId, kind: batch.kind, attempt: n, records: batch.entries.length, status: outcome.status, errorClass: row.errorClass, latencyMs: result.latencyMs }, 'delivery attempt');
  deps.events.batchSent({
    drainType: drain.type,
    kind: batch.kind,
    outcome: outcome.status === 'success' ? 'ok' : outcome.status === 'retryable' ? 'retry' : 'dropped',
    errorClass: row.errorClass,
    records: batch.entries.length,
    bytes: request.bytes,
    bytesCompressed: request.body.length,
    latencyMs: result.latencyMs,
  });
  return { outcome, row };
}

/** At most 1 KB of the answer, cut on a character boundary, with secrets scrubbed. */
function excerpt(body: Buffer, secrets: readonly string[]): string {
  const text = scrubExcerpt(body.subarray(0, EXCERPT_MAX_BYTES * 4).toString('utf8'), secrets);
  let cut = Buffer.from(text, 'utf8').subarray(0, EXCERPT_MAX_BYTES).toString('utf8');
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return cut;
}
