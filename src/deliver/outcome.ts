/**
 * A delivery attempt's outcome as a value, mapped from the transport result in
 * one place (the error classes: model/delivery.ts).
 */
import type { AttemptOutcome, ErrorClass } from '../model/delivery.js';
import type { Encoder } from '../encode/encoder.js';
import type { TransportResult } from './transport.js';

/** 4xx answers that are worth retrying; every other 4xx is final. */
const RETRYABLE_4XX = new Set([408, 429]);

export function outcomeOfStatus(statusCode: number, retryAfterHeader: string | undefined, nowMs = Date.now()): AttemptOutcome {
  if (statusCode >= 200 && statusCode < 300) return { status: 'success', rejected: 0 };
  if (statusCode >= 300 && statusCode < 400) return { status: 'failure', errorClass: 'http_3xx' };
  const retryAfterMs = parseRetryAfter(retryAfterHeader, nowMs);
  if (statusCode >= 500) return withRetryAfter({ status: 'retryable', errorClass: 'http_5xx' }, retryAfterMs);
  if (RETRYABLE_4XX.has(statusCode)) return withRetryAfter({ status: 'retryable', errorClass: 'http_4xx' }, retryAfterMs);
  return { status: 'failure', errorClass: 'http_4xx' };
}

const withRetryAfter = (o: AttemptOutcome & { status: 'retryable' }, ms: number | undefined): AttemptOutcome =>
  ms === undefined ? o : { ...o, retryAfterMs: ms };

/** `Retry-After` as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

const TLS_CODES = /^(ERR_TLS_|CERT_|ERR_SSL_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_(VERIFY|GET)|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** The `code`s of a transport error and of its causes, outermost first. */
export function transportErrorCodes(e: unknown): string[] {
  const codes: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur && depth < 5; depth++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') codes.push(c);
    cur = (cur as { cause?: unknown }).cause;
  }
  return codes;
}

/** Classifies a transport error by its code (and its cause's), never by message text. */
export function classifyTransportError(e: unknown): ErrorClass {
  const codes = transportErrorCodes(e);
  for (const code of codes) {
    if (code === 'ERR_SSRF_BLOCKED') return 'ssrf';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') return 'dns';
    if (TLS_CODES.test(code)) return 'tls';
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ABORT_ERR' || code === 'UND_ERR_ABORTED' || code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ERR_DELIVERY_TIMEOUT') {
      return 'timeout';
    }
  }
  if ((e as { name?: string })?.name === 'TimeoutError' || (e as { name?: string })?.name === 'AbortError') return 'timeout';
  return 'connect';
}

export const isRetryableClass = (c: ErrorClass): boolean => c !== 'ssrf' && c !== 'http_3xx';

/**
 * The outcome of a transport result: an error by its class, an answer by its status and
 * Retry-After; with the encoder's reading of partial success (OTLP) when it has one.
 */
export function outcomeOf(result: TransportResult, encoder?: Pick<Encoder, 'rejectedRecords'>): AttemptOutcome {
  if (result.kind === 'error') {
    const errorClass = classifyTransportError(result.error);
    return isRetryableClass(errorClass) ? { status: 'retryable', errorClass } : { status: 'failure', errorClass };
  }
  const ra = result.headers['retry-after'];
  const outcome = outcomeOfStatus(result.statusCode, Array.isArray(ra) ? ra[0] : ra);
  if (outcome.status === 'success' && encoder?.rejectedRecords) {
    const ct = result.headers['content-type'];
    // Spec 01 part 4.2: refused records make a delivered batch `partial`; zero refused is a plain ok.
    const rejected = encoder.rejectedRecords(result.body, Array.isArray(ct) ? ct[0] : ct);
    if (rejected > 0) return { status: 'success', errorClass: 'partial', rejected };
  }
  return outcome;
}
