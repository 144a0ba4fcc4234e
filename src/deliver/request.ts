/**
 * What goes on the wire: a plan and a batch (or a verification) made into
 * headers and a body. The batch is encoded with a new batch id per attempt
 * (the first attempt may keep the one the batch was opened with), gzipped
 * (drains sharing one body share its gzip: encode/shared-encoding.ts) and, for
 * drains with signing keys, signed. This is the only place that signs.
 */
import type { ReadyBatch } from '../batch/batcher.js';
import { SCHEMA_URL } from '../encode/encoder.js';
import { gzipOnce } from '../encode/shared-encoding.js';
import { gzipBody } from '../encode/compression.js';
import type { DrainPlan } from '../plan/drain-plans.js';
import { signBatch } from '../sign/standard-webhooks.js';
import type { PostRequest } from './transport.js';

export const USER_AGENT = 'logdrain/0.1';

/** A request ready for the transport, and the size of its body before compression. */
export interface DeliveryRequest extends PostRequest {
  readonly bytes: number;
}

/*
 * A batch's request is made in three calls around the one wait for gzip, which the attempt awaits
 * in its own frame (attempt.ts): no promise or closure beyond what the send itself needs.
 */

/** The batch's body, encoded under `batchId`. */
export const encodeBatch = (batch: ReadyBatch, batchId: string): Buffer =>
  batch.plan.encoder.encode({ batchId, resource: batch.resource, resourceJson: batch.resourceJson, entries: batch.entries });

/** The body gzipped at `level`, once for all drains sharing it. */
export const gzipBatch = (body: Buffer, level: number): Promise<Buffer> => gzipOnce(body, level, gzipBody);

/** The batch's request: headers, the signature over the encoded body, the gzipped body; the encoded body is recycled. */
export function batchRequest(batch: ReadyBatch, batchId: string, body: Buffer, compressed: Buffer): DeliveryRequest {
  const { plan } = batch;
  const headers: Record<string, string> = {
    ...plan.headers,
    'content-type': plan.encoder.contentType,
    'content-encoding': 'gzip',
    'user-agent': USER_AGENT,
    'x-svc-schema': SCHEMA_URL,
    'x-svc-batch-id': batchId,
  };
  // A replay's batch says so: a receiver tells re-sent records from new ones without reading them.
  if (batch.replayId !== undefined) headers['logdrain-replay'] = batch.replayId;
  if (plan.signingKeys.length > 0) Object.assign(headers, signBatch(plan.signingKeys, batchId, body));
  const bytes = body.length;
  // Compressed and signed: nothing reads the body any more.
  plan.encoder.recycle?.(body);
  return { url: plan.url, headers, body: compressed, bytes };
}

/**
 * An ownership verification (CONTRACT part 5): the JSON body uncompressed, the single-use token in
 * `X-Svc-Verify`, the drain's configured headers over ours, signed with the current secret only
 * under the verification id.
 */
export function verificationRequest(plan: DrainPlan, verificationId: string, token: string): DeliveryRequest {
  const body = Buffer.from(JSON.stringify({ type: 'svc.drain.verify', drainId: plan.drain.id, verificationId }));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-svc-verify': token,
    ...plan.headers,
  };
  if (plan.signingKeys.length > 0) Object.assign(headers, signBatch(plan.signingKeys.slice(0, 1), verificationId, body));
  return { url: plan.url, headers, body, bytes: body.length };
}
