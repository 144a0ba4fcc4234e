/**
 * ULIDs, drawn from a pooled CSPRNG: every id the store, the audit log and the families make. The
 * `ulid` package's own generator calls crypto.getRandomValues once per character (16 calls an
 * id); with two ids per POST that was a fifth of the worker's CPU when many small batches went
 * out (10,000 agents), and about a tenth of the API's CPU under a stream of persona version
 * creates (an id for the version, one for its audit entry). The pool keeps the randomness
 * cryptographic: only the number of calls into crypto changes.
 */
import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';

const POOL_BYTES = 4096;
let pool = randomBytes(POOL_BYTES);
let next = 0;

/** A number in [0, 1) from one random byte, as the package's own generator makes it. */
function pooledPrng(): number {
  if (next === POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    next = 0;
  }
  return pool[next++]! / 256;
}

export const newId = (): string => ulid(undefined, pooledPrng);
