/**
 * Standard Webhooks signatures (CONTRACT part 5): `v1,<base64 HMAC-SHA256>`
 * over `<id>.<timestamp>.<body>`, body before compression. During a rotation
 * window the header carries two entries, the new secret's first.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

import { signingKey } from '../security/webhook-secret.js';

export { generateSecret, signingKey, whsecProblem, WHSEC_KEY_BYTES } from '../security/webhook-secret.js';

/** The `webhook-signature` value for `keys` (newest first). */
export function signatureHeader(keys: readonly Buffer[], id: string, timestampSec: number, body: Buffer): string {
  const prefix = Buffer.from(`${id}.${timestampSec}.`, 'utf8');
  return keys
    .map((key) => `v1,${createHmac('sha256', key).update(prefix).update(body).digest('base64')}`)
    .join(' ');
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signBatch(keys: readonly Buffer[], id: string, body: Buffer, nowMs = Date.now()): SignatureHeaders {
  const ts = Math.floor(nowMs / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signatureHeader(keys, id, ts, body) };
}

/** How far a `webhook-timestamp` may be from the receiver's clock: five minutes, as Standard Webhooks says. */
export const TIMESTAMP_TOLERANCE_SEC = 5 * 60;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Checks a delivery's Standard Webhooks signature with `secret`, the way a destination would:
 * the three headers present, the timestamp within five minutes of `nowMs`, and one of the
 * space-separated `v1,` entries equal (compared in constant time) to the HMAC over
 * `<id>.<timestamp>.<body>`, where body is the payload after Content-Encoding is undone.
 * The same algorithm as the `standardwebhooks` package, without it (it is not a runtime
 * dependency). Never throws; `reason` says what did not hold.
 */
export function verifySignature(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
  nowMs = Date.now(),
): SignatureCheck {
  const header = (name: string): string | undefined => {
    const v = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  const missing = [['webhook-id', id], ['webhook-timestamp', timestamp], ['webhook-signature', signatures]]
    .filter(([, v]) => v === undefined || v === '')
    .map(([n]) => n);
  if (missing.length > 0) return { ok: false, reason: `missing header ${missing.join(', ')}` };
  if (!/^\d{1,15}$/.test(timestamp!)) return { ok: false, reason: 'webhook-timestamp is not unix seconds' };
  const ts = Number(timestamp);
  const skew = Math.floor(nowMs / 1000) - ts;
  if (skew > TIMESTAMP_TOLERANCE_SEC) return { ok: false, reason: `timestamp too old (${skew} s ago; at most ${TIMESTAMP_TOLERANCE_SEC})` };
  if (-skew > TIMESTAMP_TOLERANCE_SEC) return { ok: false, reason: `timestamp too new (${-skew} s ahead; at most ${TIMESTAMP_TOLERANCE_SEC})` };
  const key = signingKey(secret);
  if (key.length === 0) return { ok: false, reason: 'the secret is empty' };
  // Recomputed over the timestamp exactly as sent, as the package does.
  const prefix = Buffer.from(`${id}.${timestamp}.`, 'utf8');
  const expected = Buffer.from(createHmac('sha256', key).update(prefix).update(body).digest('base64'), 'utf8');
  let v1 = 0;
  for (const entry of signatures!.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    v1++;
    // Compared as text, as the package does: no lenient base64 decoding of what was sent.
    const given = Buffer.from(entry.slice(comma + 1), 'utf8');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: v1 === 0 ? 'no v1 signature in webhook-signature' : 'no signature matches (wrong secret, or the body was altered)' };
}
