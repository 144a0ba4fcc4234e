import { describe, expect, it } from 'vitest';
import { pageCut } from '../../../src/backlog/backlog-page.js';
import type { BacklogRow } from '../../../src/modules/drains/tables/backlog.js';

const row = (id: number, resource: string): BacklogRow => ({
  id, resourceKey: `k-${resource}`, resourceJson: resource, recordJson: '{}', recordId: `r${id}`, bytes: 2, scrubHits: 0,
});

describe('pageCut', () => {
  it('leaves a full page\'s last resource for the next page, which starts with it', () => {
    const rows = [row(1, 'a'), row(5, 'a'), row(2, 'b'), row(3, 'c'), row(4, 'c')];
    const { deliver, next } = pageCut(rows, true);
    expect(deliver.map((r) => r.id)).toEqual([1, 5, 2]);
    expect(next).toEqual({ resourceKey: 'k-b', id: 2 });
  });

  it('delivers a page that is not full, or holds one resource, whole', () => {
    const rows = [row(1, 'a'), row(2, 'b'), row(3, 'b')];
    expect(pageCut(rows, false)).toEqual({ deliver: rows, next: { resourceKey: 'k-b', id: 3 } });
    const one = [row(1, 'a'), row(2, 'a')];
    expect(pageCut(one, true)).toEqual({ deliver: one, next: { resourceKey: 'k-a', id: 2 } });
    expect(pageCut([], true)).toEqual({ deliver: [], next: undefined });
  });
});
