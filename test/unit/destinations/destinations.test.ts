/**
 * The destinations table decides per drain type what a compiled plan sends: the encoding, whether
 * batches are signed; and the type list is the table's.
 */
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { DRAIN_TYPES, destinationOf } from '../../../src/destinations/index.js';
import { compilePlan } from '../../../src/plan/drain-plans.js';
import { createSecretBox } from '../../../src/security/secret-box.js';
import { generateSecret } from '../../../src/sign/standard-webhooks.js';
import { drainRow } from '../pipeline/fixture.js';

const box = createSecretBox(randomBytes(32));

describe('destinations', () => {
  it('list every drain type once, in table order', () => {
    expect(DRAIN_TYPES).toEqual(['http', 'otlp', 'vendor-a', 'vendor-b']);
    for (const t of DRAIN_TYPES) expect(destinationOf(t).type).toBe(t);
  });

  it('choose each type\'s encoding and signing in the compiled plan', () => {
    const secret = box.seal(generateSecret());
    const plan = (type: (typeof DRAIN_TYPES)[number], format: 'json' | 'ndjson') => compilePlan(drainRow(`d_${type}_${format}`, { type, format, secret }), box);
    expect(plan('http', 'json').encoder.contentType).toBe('application/json');
    expect(plan('http', 'ndjson').encoder.contentType).toBe('application/x-ndjson');
    expect(plan('http', 'json').signingKeys).toHaveLength(1);
    expect(plan('otlp', 'ndjson').encoder.contentType).toBe('application/x-protobuf');
    expect(plan('vendor-a', 'ndjson').encoder.contentType).toBe('application/json');
    expect(plan('vendor-b', 'json').encoder.contentType).toBe('application/x-ndjson');
    for (const t of ['otlp', 'vendor-a', 'vendor-b'] as const) expect(plan(t, 'json').signingKeys).toEqual([]);
    // Drains of one encoding share it (encode/shared-encoding.ts): one encoder object per type.
    expect(plan('otlp', 'json').encoder).toBe(plan('otlp', 'ndjson').encoder);
  });

  it('verify http by the echoed token and the other types by any 2xx', () => {
    expect(DRAIN_TYPES.filter((t) => destinationOf(t).verification === 'token-echo')).toEqual(['http']);
    expect(DRAIN_TYPES.filter((t) => destinationOf(t).signs)).toEqual(['http']);
  });
});
