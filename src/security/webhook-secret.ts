/**
 * Signing secrets in the Standard Webhooks form (`whsec_` and base64 of the
 * key): made when a drain is created or rotated, checked when a user brings
 * one, turned into the HMAC key when a batch is signed (sign/).
 */
import { randomBytes } from 'node:crypto';

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

