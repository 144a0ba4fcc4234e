/** `replay`: an attempt of a replay's batch (re-sent records of the platform copy, docs/delivery.md#replays). */
export const DELIVERY_KINDS = ['batch', 'test', 'verify', 'heartbeat', 'dropped', 'truncated', 'replay'] as const;
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

/**
 * Why an attempt failed (or was partial): its error class (docs/delivery.md, "Delivery error classes"):
 *
 *   http_3xx  redirect answered; redirects are never followed (final)
 *   http_4xx  client error; final except 408 and 429
 *   http_5xx  server error (retried)
 *   timeout   no complete answer within DELIVERY_TIMEOUT_MS (retried)
 *   connect   connection refused, reset or closed early (retried)
 *   tls       certificate or handshake failure (retried: often a rotation in progress)
 *   dns       host name did not resolve (retried)
 *   ssrf      the host resolved to a private, loopback, link-local or metadata address (final)
 *   partial   OTLP partial success: delivered, some records refused (never retried)
 */
export type ErrorClass = 'http_3xx' | 'http_4xx' | 'http_5xx' | 'timeout' | 'connect' | 'tls' | 'dns' | 'ssrf' | 'partial';

/** What one attempt came to: delivered (possibly partial), worth retrying, or final. */
export type AttemptOutcome =
  | { status: 'success'; errorClass?: 'partial'; rejected: number }
  | { status: 'retryable'; errorClass: ErrorClass; retryAfterMs?: number }
  | { status: 'failure'; errorClass: ErrorClass };
