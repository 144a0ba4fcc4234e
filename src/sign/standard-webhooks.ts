/**
 * Standard Webhooks signatures (CONTRACT part 5): `v1,<base64 HMAC-SHA256>`
 * over `<id>.<timestamp>.<body>`, body before compression. During a rotation
 * window the header carries two entries, the new secret's first.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and base64 of 32 random bytes. */
export const generateSecret = (): string => PREFIX + randomBytes(32).toString('base64');

/** Key sizes Standard Webhooks accepts for a `whsec_` secret, in bytes. */
export const WHSEC_KEY_BYTES = { min: 24, max: 64 } as const;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Why a `whsec_` secret is not a key, or undefined when it is one (secrets without the prefix are
 * used as their bytes and need no check here). Node's base64 decoder skips what is not base64, so
 * `whsec_!!!!` decoded to an empty key, with which anyone can sign: the text must be strict,
 * padded base64 of 24 to 64 bytes, the sizes Standard Webhooks libraries accept.
 */
export function whsecProblem(secret: string): string | undefined {
  if (!secret.startsWith(PREFIX)) return undefined;
  const b64 = secret.slice(PREFIX.length);
  if (!BASE64.test(b64)) return 'a whsec_ secret must be whsec_ followed by padded base64';
  const bytes = Buffer.from(b64, 'base64').length;
  if (bytes < WHSEC_KEY_BYTES.min || bytes > WHSEC_KEY_BYTES.max) {
    return `a whsec_ secret must decode to ${WHSEC_KEY_BYTES.min} to ${WHSEC_KEY_BYTES.max} bytes (it decodes to ${bytes})`;
  }
  return undefined;
}

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
