import { describe, expect, it } from 'vitest';
import { OffsetTracker } from '../../../src/source/offset-tracker.js';

function tracker(max = 1000) {
  const commits: [number, string][] = [];
  const t = new OffsetTracker({ maxInFlightRecords: max, onCommittable: (p, next) => commits.push([p, next]) });
  return { t, commits };
}

describe('OffsetTracker', () => {
  it('commits only over a prefix of settled chunks, in order', () => {
    const { t, commits } = tracker();
    const a = t.open(0, '10', 10);
    const b = t.open(0, '20', 10);
    a.hold(2);
    a.seal();
    b.seal(); // b settles first: nothing may be committed while a is outstanding
    expect(commits).toEqual([]);
    a.release();
    expect(commits).toEqual([]);
    a.release();
    expect(commits).toEqual([[0, '20']]);
    expect(t.inFlightRecords).toBe(0);
  });

  it('keeps partitions independent', () => {
    const { t, commits } = tracker();
    const p0 = t.open(0, '5', 5);
    const p1 = t.open(1, '7', 7);
    p0.hold();
    p0.seal();
    p1.seal();
    expect(commits).toEqual([[1, '7']]);
    p0.release();
    expect(commits).toEqual([[1, '7'], [0, '5']]);
  });

  it('applies backpressure until records settle', async () => {
    const { t } = tracker(10);
    const a = t.open(0, '10', 10);
    a.hold();
    a.seal();
    let waited = false;
    const w = t.waitForCapacity().then(() => (waited = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(waited).toBe(false);
    a.release();
    await w;
    expect(waited).toBe(true);
  });

  it('refuses a release without a hold', () => {
    const { t } = tracker();
    const a = t.open(0, '1', 1);
    a.seal();
    expect(() => a.release()).toThrow(/more often than held/);
  });
});
