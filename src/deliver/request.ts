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

/** A batch's request: its body encoded under `batchId`, gzipped at `level` and signed. */
export async function batchRequest(batch: ReadyBatch, batchId: string, level: number): Promise<DeliveryRequest> {
  const { plan } = batch;
  const body = plan.encoder.encode({ batchId, resource: batch.resource, resourceJson: batch.resourceJson, entries: batch.entries });
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
