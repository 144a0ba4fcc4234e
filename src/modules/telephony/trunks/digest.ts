/**
 * Digest credentials of SIP trunk users. The password is 24 letters and
 * digits drawn from the CSPRNG, shown once; what is kept is what a SIP
 * registrar needs to check a digest response (RFC 7616 section 3.4.2):
 * HA1 = H(username ":" realm ":" password) for MD5 and SHA-256, each sealed
 * at rest. The password itself is never stored.
 */
import { createHash, randomInt } from 'node:crypto';
import type { SecretBox } from '../../../security/secret-box.js';
import type { DigestSecret } from './repository.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const PASSWORD_LENGTH = 24;

/** 5-32 characters, letters, digits and dashes, starting and ending with a letter or digit. */
export const USERNAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9-]{3,30}[A-Za-z0-9]$';
export const USERNAME_RULE = 'Username must be 5-32 characters, alphanumeric and dashes only';

export function generatePassword(): string {
  let out = '';
  // randomInt draws without modulo bias.
  for (let i = 0; i < PASSWORD_LENGTH; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export const ha1 = (algorithm: 'md5' | 'sha256', username: string, realm: string, password: string): string =>
  createHash(algorithm).update(`${username}:${realm}:${password}`, 'utf8').digest('hex');

export function digestSecret(box: SecretBox, username: string, realm: string, password: string): DigestSecret {
  return { realm, ha1Md5: box.seal(ha1('md5', username, realm, password)), ha1Sha256: box.seal(ha1('sha256', username, realm, password)) };
}
