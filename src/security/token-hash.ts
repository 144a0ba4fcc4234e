import { createHash } from 'node:crypto';

/** Credentials are looked up by the SHA-256 of the presented token; plain text is never stored. */
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
