import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret, signBatch, signingKey } from '../../../src/sign/standard-webhooks.js';

describe('Standard Webhooks signing', () => {
  it('produces signatures the standardwebhooks package verifies', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = Buffer.from('{"hello":"world"}');
    const headers = signBatch([signingKey(secret)], '01JBATCH', body);
    expect(new Webhook(secret).verify(body.toString(), { ...headers })).toEqual({ hello: 'world' });
  });

  it('carries two v1 entries during a rotation, the new secret first, each verifying on its own', () => {
    const [fresh, old] = [generateSecret(), generateSecret()];
    const body = Buffer.from('{"a":1}');
    const headers = signBatch([signingKey(fresh), signingKey(old)], 'id1', body);
    const entries = headers['webhook-signature'].split(' ');
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => e.startsWith('v1,'))).toBe(true);
    const only = (i: number) => ({ ...headers, 'webhook-signature': entries[i]! });
    expect(() => new Webhook(fresh).verify(body.toString(), only(0))).not.toThrow();
    expect(() => new Webhook(old).verify(body.toString(), only(1))).not.toThrow();
    expect(() => new Webhook(fresh).verify(body.toString(), only(1))).toThrow();
  });

  it('uses a secret without the whsec_ prefix as its UTF-8 bytes', () => {
    expect(signingKey('plain-secret').toString('utf8')).toBe('plain-secret');
    expect(signingKey(`whsec_${Buffer.from('k3y').toString('base64')}`).toString('utf8')).toBe('k3y');
  });
});
