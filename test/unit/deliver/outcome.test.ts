import { describe, expect, it } from 'vitest';
import { classifyTransportError, outcomeOfStatus, parseRetryAfter } from '../../../src/deliver/outcome.js';
import { backoffMs } from '../../../src/deliver/backoff.js';

describe('delivery outcomes', () => {
  it('maps statuses to success, retryable and final failures', () => {
    expect(outcomeOfStatus(200, undefined).status).toBe('success');
    expect(outcomeOfStatus(204, undefined).status).toBe('success');
    expect(outcomeOfStatus(302, undefined)).toEqual({ status: 'failure', errorClass: 'http_3xx' });
    expect(outcomeOfStatus(400, undefined)).toEqual({ status: 'failure', errorClass: 'http_4xx' });
    expect(outcomeOfStatus(401, undefined)).toEqual({ status: 'failure', errorClass: 'http_4xx' });
    expect(outcomeOfStatus(408, undefined)).toEqual({ status: 'retryable', errorClass: 'http_4xx' });
    expect(outcomeOfStatus(429, '7')).toEqual({ status: 'retryable', errorClass: 'http_4xx', retryAfterMs: 7000 });
    expect(outcomeOfStatus(503, undefined)).toEqual({ status: 'retryable', errorClass: 'http_5xx' });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('classifies transport errors by code, following causes', () => {
    expect(classifyTransportError(Object.assign(new Error(), { code: 'ECONNREFUSED' }))).toBe('connect');
    expect(classifyTransportError(Object.assign(new Error(), { code: 'UND_ERR_HEADERS_TIMEOUT' }))).toBe('timeout');
    expect(classifyTransportError(Object.assign(new Error(), { code: 'ENOTFOUND' }))).toBe('dns');
    expect(classifyTransportError(Object.assign(new Error(), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }))).toBe('tls');
    expect(classifyTransportError(new Error('x', { cause: Object.assign(new Error(), { code: 'ERR_SSRF_BLOCKED' }) }))).toBe('ssrf');
    expect(classifyTransportError(Object.assign(new Error(), { name: 'TimeoutError' }))).toBe('timeout');
  });

  it('backs off exponentially with jitter, capped, and honours a longer Retry-After', () => {
    const opts = { baseMs: 100, maxMs: 1000 };
    for (let n = 1; n <= 10; n++) {
      const ceiling = Math.min(1000, 100 * 2 ** (n - 1));
      const d = backoffMs(n, opts);
      expect(d).toBeGreaterThanOrEqual(ceiling / 2);
      expect(d).toBeLessThanOrEqual(ceiling);
    }
    expect(backoffMs(1, opts, 5000)).toBe(5000);
    expect(backoffMs(4, { ...opts, random: () => 1 }, 10)).toBe(800);
  });
});
