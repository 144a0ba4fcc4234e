/** The kernel's paging forms: cursor + limit, page + limit, offset + limit with a total. */
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, offsetPage, parseLimit, parseOffsetLimit, parsePageLimit } from '../../../src/api/kernel/pagination.js';

const refused = (fn: () => unknown, field: string) =>
  expect(fn).toThrow(expect.objectContaining({ statusCode: 400, code: 'VALIDATION_FAILED', details: expect.objectContaining({ field }) }));

describe('pagination', () => {
  it('round-trips a keyset cursor and refuses one it did not write', () => {
    const at = new Date('2026-11-26T01:02:03.004Z');
    expect(decodeCursor(encodeCursor(at, 'id with spaces/é'))).toEqual({ at, id: 'id with spaces/é' });
    refused(() => decodeCursor('not*base64'), 'cursor');
    refused(() => decodeCursor(Buffer.from('["0000-01-01T00:00:00.000Z","x"]').toString('base64url')), 'cursor');
  });

  it('reads limit with a default, a maximum refused or clamped', () => {
    expect(parseLimit(undefined, 50, 200)).toBe(50);
    expect(parseLimit('200', 50, 200)).toBe(200);
    refused(() => parseLimit('201', 50, 200), 'limit');
    expect(parseLimit('500', 20, 100, true)).toBe(100);
    refused(() => parseLimit('0', 20, 100, true), 'limit');
    refused(() => parseLimit('1.5', 20, 100), 'limit');
  });

  it('reads page + limit into an offset', () => {
    expect(parsePageLimit({}, { defaultLimit: 10, maxLimit: 50 })).toEqual({ page: 1, limit: 10, offset: 0 });
    expect(parsePageLimit({ page: '3', limit: '20' }, { defaultLimit: 10, maxLimit: 50 })).toEqual({ page: 3, limit: 20, offset: 40 });
    refused(() => parsePageLimit({ page: '0' }, { defaultLimit: 10, maxLimit: 50 }), 'page');
    refused(() => parsePageLimit({ page: ['1', '2'] }, { defaultLimit: 10, maxLimit: 50 }), 'page');
    refused(() => parsePageLimit({ page: '101' }, { defaultLimit: 10, maxLimit: 50, maxPage: 100 }), 'page');
  });

  it('reads offset + limit and answers a page with its total and the next offset', () => {
    expect(parseOffsetLimit({ offset: '10', limit: '5' }, { defaultLimit: 50, maxLimit: 100 })).toEqual({ offset: 10, limit: 5 });
    refused(() => parseOffsetLimit({ offset: '-1' }, { defaultLimit: 50, maxLimit: 100 }), 'offset');
    expect(offsetPage(['a', 'b'], 12, { offset: 10, limit: 5 })).toEqual({ items: ['a', 'b'], total: 12, limit: 5, offset: 10, nextOffset: null });
    expect(offsetPage(['a', 'b'], 12, { offset: 0, limit: 2 }).nextOffset).toBe(2);
  });
});
