/** The retry policy's table (src/deliver/retry-policy.ts): what follows each kind of attempt. */
import { describe, expect, it } from 'vitest';
import { retryPolicy } from '../../../src/deliver/retry-policy.js';

const retry = { baseMs: 100, maxMs: 10_000 };
const live = retryPolicy({ retry, horizonMs: 60_000, parkAfterAttempts: 3 });
const T0 = 1_000_000;

describe('retry policy', () => {
  it('is done on a delivery, partial or whole', () => {
    expect(live(1, { status: 'success', rejected: 0 }, T0, 'batch', T0)).toEqual({ action: 'done' });
    expect(live(5, { status: 'success', errorClass: 'partial', rejected: 2 }, T0, 'batch', T0)).toEqual({ action: 'done' });
  });

  it('drops a final failure with its class, and a retryable one past the horizon with `horizon`', () => {
    expect(live(1, { status: 'failure', errorClass: 'http_4xx' }, T0, 'batch', T0)).toEqual({ action: 'drop', reason: 'http_4xx' });
    expect(live(1, { status: 'failure', errorClass: 'ssrf' }, T0, 'test', T0)).toEqual({ action: 'drop', reason: 'ssrf' });
    expect(live(2, { status: 'retryable', errorClass: 'http_5xx' }, T0, 'batch', T0 + 60_000)).toEqual({ action: 'drop', reason: 'horizon' });
  });

  it('parks a live batch once it has failed `parkAfterAttempts` times; other kinds keep retrying', () => {
    expect(live(3, { status: 'retryable', errorClass: 'timeout' }, T0, 'batch', T0)).toEqual({ action: 'park' });
    expect(live(3, { status: 'retryable', errorClass: 'timeout' }, T0, 'test', T0)).toMatchObject({ action: 'retry' });
  });

  it('retries after a backoff in the upper half of the ceiling, at least Retry-After, never past the horizon', () => {
    for (let i = 0; i < 50; i++) {
      const d = live(2, { status: 'retryable', errorClass: 'connect' }, T0, 'batch', T0);
      expect(d.action).toBe('retry');
      const ms = (d as { afterMs: number }).afterMs;
      expect(ms).toBeGreaterThanOrEqual(100);
      expect(ms).toBeLessThanOrEqual(200);
    }
    expect(live(1, { status: 'retryable', errorClass: 'http_4xx', retryAfterMs: 5_000 }, T0, 'batch', T0)).toEqual({ action: 'retry', afterMs: 5_000 });
    expect(live(1, { status: 'retryable', errorClass: 'http_4xx', retryAfterMs: 5_000 }, T0, 'batch', T0 + 58_000)).toEqual({ action: 'retry', afterMs: 2_000 });
  });

  it('never parks nor expires the backlog pump\'s records', () => {
    const pump = retryPolicy({ retry, horizonMs: Infinity, parkAfterAttempts: Infinity });
    const d = pump(40, { status: 'retryable', errorClass: 'http_5xx', retryAfterMs: 1 }, 0, 'batch', T0 * 1000);
    expect(d.action).toBe('retry');
    expect((d as { afterMs: number }).afterMs).toBeGreaterThanOrEqual(5_000);
    expect((d as { afterMs: number }).afterMs).toBeLessThanOrEqual(10_000);
  });
});
