/** The kernel's text rule (storable-text.ts) and instant bounds (instant.ts) on values alone. */
import { describe, expect, it } from 'vitest';
import { unstorableIssue, unstorableTextIn } from '../../../src/api/kernel/storable-text.js';
import { boundedInstant } from '../../../src/api/kernel/instant.js';

describe('unstorableTextIn', () => {
  it('finds NUL and half a surrogate pair in strings and keys at any depth, naming the first in document order', () => {
    expect(unstorableTextIn({ a: 'ok', b: ['x', { c: 'a\u0000b' }], d: '\ud800' })).toEqual({ path: ['b', '1', 'c'], inKey: false });
    expect(unstorableTextIn({ input: { ['k\udc00']: 1 } })).toEqual({ path: ['input'], inKey: true });
    expect(unstorableTextIn('\u0000')).toEqual({ path: [], inKey: false });
    // A whole pair is text like any other.
    expect(unstorableTextIn({ emoji: '😀', n: 1, t: true, z: null })).toBeUndefined();
  });

  it('walks values nested far past the stack', () => {
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(unstorableTextIn({ x: deep })?.path).toHaveLength(200_001);
  });

  it('names the part when the value is the part itself, and the path otherwise', () => {
    expect(unstorableIssue('body', 'a\u0000')).toEqual({ part: 'body', path: 'body', constraint: 'storable', message: 'body must not contain NUL characters or unpaired surrogates' });
    expect(unstorableIssue('querystring', { since: ['x', 'y\ud800'] })?.message).toBe('since.1 must not contain NUL characters or unpaired surrogates');
    expect(unstorableIssue('params', { runId: 'wfr_1' })).toBeUndefined();
  });
});

describe('boundedInstant', () => {
  it('takes RFC 3339 instants of real days from the epoch to the end of year 9999', () => {
    expect(boundedInstant('1970-01-01T00:00:00Z')).toBe(0);
    expect(boundedInstant('9999-12-31T23:59:59.999Z')).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    expect(boundedInstant('2026-11-20T10:00:00+02:00')).toBe(Date.UTC(2026, 10, 20, 8));
    for (const text of ['1969-12-31T23:59:59.999Z', '0000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '9999-12-31T23:59:60Z',
      '2026-02-30T00:00:00Z', '2026-11-20', '2026-11-20T10:00:00', '9999-12-31T23:59:59.999-00:01']) {
      expect(boundedInstant(text), text).toBeNaN();
    }
  });
});
