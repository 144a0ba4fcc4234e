import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret, signBatch, signingKey, verifySignature } from '../../../src/sign/standard-webhooks.js';

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

describe('Standard Webhooks verification (verifySignature), held to the standardwebhooks package', () => {
  const body = Buffer.from('{"records":[{"id":"r1"}]}');
  const NOW = 1_750_000_000_000;

  it('accepts what the package signs, and what the engine signs', () => {
    const secret = generateSecret();
    const wh = new Webhook(secret);
    const at = new Date(NOW);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(NOW / 1000), 'webhook-signature': wh.sign('msg_1', at, body.toString()) };
    expect(verifySignature(secret, headers, body, NOW)).toEqual({ ok: true });
    expect(verifySignature(secret, { ...signBatch([signingKey(secret)], 'b1', body, NOW) }, body, NOW)).toEqual({ ok: true });
  });

  it('accepts any of the space-separated v1 entries (a rotation window), and skips other versions', () => {
    const [fresh, old] = [generateSecret(), generateSecret()];
    const headers = { ...signBatch([signingKey(fresh), signingKey(old)], 'b2', body, NOW) };
    expect(verifySignature(old, headers, body, NOW)).toEqual({ ok: true });
    expect(verifySignature(fresh, headers, body, NOW)).toEqual({ ok: true });
    const sig = headers['webhook-signature'].split(' ')[1]!.slice(3);
    expect(verifySignature(old, { ...headers, 'webhook-signature': `v1a,${sig}` }, body, NOW)).toEqual({ ok: false, reason: 'no v1 signature in webhook-signature' });
    expect(verifySignature(old, { ...headers, 'webhook-signature': `v2,xyz v1,${sig}` }, body, NOW)).toEqual({ ok: true });
  });

  it('refuses, with a reason, every tampering the package refuses', () => {
    const secret = generateSecret();
    const wh = new Webhook(secret);
    const good = { 'webhook-id': 'msg_2', 'webhook-timestamp': String(NOW / 1000), 'webhook-signature': wh.sign('msg_2', new Date(NOW), body.toString()) };
    const cases: [string, Record<string, string>, Buffer, RegExp][] = [
      ['altered body', good, Buffer.from('{"records":[{"id":"r2"}]}'), /no signature matches/],
      ['altered id', { ...good, 'webhook-id': 'msg_3' }, body, /no signature matches/],
      ['altered timestamp', { ...good, 'webhook-timestamp': String(NOW / 1000 + 1) }, body, /no signature matches/],
      ['wrong secret', { ...good, 'webhook-signature': new Webhook(generateSecret()).sign('msg_2', new Date(NOW), body.toString()) }, body, /no signature matches/],
      ['signature with junk appended', { ...good, 'webhook-signature': `${good['webhook-signature']}==` }, body, /no signature matches/],
      ['missing signature', { 'webhook-id': 'msg_2', 'webhook-timestamp': good['webhook-timestamp'] }, body, /missing header webhook-signature/],
      ['timestamp not a number', { ...good, 'webhook-timestamp': 'yesterday' }, body, /not unix seconds/],
    ];
    for (const [what, headers, payload, reason] of cases) {
      const ours = verifySignature(secret, headers, payload, NOW);
      expect(ours.ok, what).toBe(false);
      expect(ours.ok ? '' : ours.reason, what).toMatch(reason);
    }
    // The package agrees on the cases it can judge at the real clock: sign them now.
    const nowHeaders = { 'webhook-id': 'msg_4', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': '' };
    nowHeaders['webhook-signature'] = wh.sign('msg_4', new Date(Number(nowHeaders['webhook-timestamp']) * 1000), body.toString());
    expect(verifySignature(secret, nowHeaders, body)).toEqual({ ok: true });
    expect(() => wh.verify(body.toString(), nowHeaders)).not.toThrow();
    const tampered = Buffer.from(body.toString().replace('r1', 'r9'));
    expect(verifySignature(secret, nowHeaders, tampered).ok).toBe(false);
    expect(() => wh.verify(tampered.toString(), nowHeaders)).toThrow();
  });

  it('refuses a timestamp more than five minutes off either way, and accepts one within', () => {
    const secret = generateSecret();
    const at = (offsetSec: number) => ({ ...signBatch([signingKey(secret)], 'b3', body, NOW + offsetSec * 1000) });
    expect(verifySignature(secret, at(-300), body, NOW)).toEqual({ ok: true });
    expect(verifySignature(secret, at(300), body, NOW)).toEqual({ ok: true });
    expect(verifySignature(secret, at(-301), body, NOW)).toMatchObject({ ok: false, reason: expect.stringMatching(/timestamp too old/) });
    expect(verifySignature(secret, at(301), body, NOW)).toMatchObject({ ok: false, reason: expect.stringMatching(/timestamp too new/) });
    // The package draws the same line.
    const realNow = Date.now();
    const stale = { ...signBatch([signingKey(secret)], 'b4', body, realNow - 301_000) };
    expect(() => new Webhook(secret).verify(body.toString(), stale)).toThrow(/too old/);
    expect(verifySignature(secret, stale, body, realNow).ok).toBe(false);
  });

  it('verifies with a secret given without the whsec_ prefix as its UTF-8 bytes, as the engine signs', () => {
    const headers = { ...signBatch([signingKey('a-plain-secret-of-some-length')], 'b5', body, NOW) };
    expect(verifySignature('a-plain-secret-of-some-length', headers, body, NOW)).toEqual({ ok: true });
    expect(verifySignature('another-plain-secret-entirely', headers, body, NOW).ok).toBe(false);
  });
});
