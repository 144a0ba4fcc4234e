export const DELIVERY_KINDS = ['batch', 'test', 'verify', 'heartbeat', 'dropped', 'truncated'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** One attempt (or one deliberate drop), as stored and as read by `GET .../deliveries`. */
export interface DeliveryRecord {
  id: string;
  orgId: string;
  drainId: string;
  batchId: string;
  kind: DeliveryKind;
  attempt: number;
  recordCount?: number | undefined;
  bytes?: number | undefined;
  bytesCompressed?: number | undefined;
  statusCode?: number | undefined;
  latencyMs?: number | undefined;
  ok: boolean;
  errorClass?: string | undefined;
  responseExcerpt?: string | undefined;
  scrubHits?: number | undefined;
  startedAt: Date;
  expiresAt: Date;
  firstRecordId?: string | undefined;
  lastRecordId?: string | undefined;
  /** `dropped` rows only: the ids of the records dropped (stored, never in the public read form). */
  recordIds?: readonly string[] | undefined;
}

export const DELIVERY_RETENTION_MS = 7 * 24 * 3600 * 1000;
