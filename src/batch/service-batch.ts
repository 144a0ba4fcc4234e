/**
 * A one-record batch the service sends on its own behalf: `svc.drain.test`
 * (the test route) and `svc.drain.heartbeat` (idle drains). It takes the
 * same path as any batch: shape, encode, gzip, sign, deliver, account.
 */
import { ulid } from 'ulid';
import type { DrainPlan } from '../plan/drain-plans.js';
import type { AgentRecord } from '../model/record.js';
import { shapeRecord } from '../shape/delivered-record.js';
import { buildResource } from '../model/resource.js';
import type { ReadyBatch } from './batcher.js';
import { ShapedEntry } from '../encode/encoder.js';

/** `batchId`: a test batch's is the one its route answered (src/deliver/probes.ts); otherwise a new one. */
export function serviceBatch(plan: DrainPlan, kind: 'test' | 'heartbeat', region: string | undefined, now = new Date(), batchId = ulid()): ReadyBatch {
  const at = now.toISOString();
  const drain = plan.drain;
  const record: AgentRecord = {
    id: `${kind}_${batchId.toLowerCase()}`,
    orgId: drain.orgId,
    agentId: 'svc-drain',
    agentName: 'svc-drain',
    environment: 'production',
    source: 'drain',
    event: kind,
    severity: 'info',
    timestamp: at,
    executionId: batchId,
    message: kind === 'test' ? `Test record for drain ${drain.name}` : `Heartbeat of drain ${drain.name}`,
    attributes: { 'svc.drain.id': drain.id },
  };
  const resource = buildResource(record, region);
  const shaped = shapeRecord(record, at, { includeContent: false, redact: null });
  return {
    plan, kind, batchId, resource, resourceJson: JSON.stringify(resource),
    entries: [new ShapedEntry(shaped, 0)], tickets: [], bytes: 0,
  };
}
