import { describe, expect, it } from 'vitest';
import { compileScrubber } from '../../../src/shape/scrubber.js';
import type { DeliveredRecord } from '../../../src/shape/delivered-record.js';

const rec = (body: string | undefined, attributes: DeliveredRecord['attributes'] = {}): DeliveredRecord => ({
  id: 'r', timestamp: 't', observedTimestamp: 't', eventName: 'svc.mcp.call', severityNumber: 9, severityText: 'INFO',
  ...(body === undefined ? {} : { body }), attributes,
});

describe('compileScrubber', () => {
  it('scrubs built-in credentials, keeping the Bearer prefix', () => {
    const s = compileScrubber(null);
    expect(s.scrubText('Authorization: Bearer abc.def-123_456XYZ')).toEqual({ text: 'Authorization: Bearer [scrubbed]', hits: 1 });
    expect(s.scrubText('secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').text).toBe('secret [scrubbed]');
    expect(s.scrubText('key sk_live_4eC39HqLyjWDarjtT1zdp7dc and API_KEY-abcdefghijklmnop').hits).toBe(2);
    expect(s.scrubText('nothing to see here')).toEqual({ text: 'nothing to see here', hits: 0 });
  });

  it('applies customer rules with their own flags in one alternation, counting every match', () => {
    const s = compileScrubber([
      { id: 'card', pattern: '\\b\\d{4}-\\d{4}-\\d{4}-\\d{4}\\b' },
      { id: 'word', pattern: 'secret\\d+', flags: 'i' },
    ]);
    expect(s.scrubText('card 1234-5678-9012-3456, SECRET1 and secret22 and Secret333')).toEqual({
      text: 'card [scrubbed], [scrubbed] and [scrubbed] and [scrubbed]',
      hits: 4,
    });
    expect(s.scrubText('secret without digits').hits).toBe(0);
  });

  it('scrubs the body and string attributes in place, leaving other values alone', () => {
    const s = compileScrubber([{ id: 'email', pattern: '[a-z]+@example\\.com' }]);
    const r = rec('mail ann@example.com', { who: 'bob@example.com', n: 5, ok: true, clean: 'fine' });
    expect(s.scrubRecord(r)).toBe(2);
    expect(r.body).toBe('mail [scrubbed]');
    expect(r.attributes).toEqual({ who: '[scrubbed]', n: 5, ok: true, clean: 'fine' });
    const empty = rec(undefined);
    expect(s.scrubRecord(empty)).toBe(0);
    expect(empty.body).toBeUndefined();
  });

  it('stays linear on a catastrophic-backtracking pattern', () => {
    const s = compileScrubber([{ id: 'evil', pattern: '(a|aa)*b' }]);
    const started = performance.now();
    expect(s.scrubText('a'.repeat(100_000)).hits).toBe(0);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('skips a rule RE2 cannot compile instead of failing the drain', () => {
    const s = compileScrubber([{ id: 'ok', pattern: 'tok\\d+' }, { id: 'bad', pattern: 'a(?=b)' }]);
    expect(s.skipped).toEqual(['bad']);
    expect(s.scrubText('tok123').text).toBe('[scrubbed]');
  });
});
