/**
 * Standard Webhooks signatures (CONTRACT part 5): `v1,<base64 HMAC-SHA256>`
 * over `<id>.<timestamp>.<body>`, body before compression. During a rotation
 * window the header carries two entries, the new secret's first.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and base64 of 32 random bytes. */
export const generateSecret = (): string => PREFIX + randomBytes(32).toString('base64');

/** The HMAC key of a secret: base64-decoded after `whsec_`, else the UTF-8 bytes as given. */
export function signingKey(secret: string): Buffer {
  return secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

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
