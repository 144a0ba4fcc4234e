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

  it('applies backpressure while records are held, and frees each record as it is released', async () => {
    const { t } = tracker(10);
    const a = t.open(0, '10', 10);
    a.hold(10); // ten records in open batches
    a.seal();
    expect(t.inFlightRecords).toBe(10);
    let waited = false;
    const w = t.waitForCapacity().then(() => (waited = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(waited).toBe(false);
    a.release(); // one record delivered and accounted: nine still held
    await w;
    expect(waited).toBe(true);
    expect(t.inFlightRecords).toBe(9);
  });

  it('counts a whole chunk while it is routed, and nothing of a settled chunk waiting behind an unsettled one', () => {
    const { t, commits } = tracker(100);
    const first = t.open(0, '10', 10);
    expect(t.inFlightRecords).toBe(10);
    first.hold(); // one record lingers in an open batch
    first.seal();
    expect(t.inFlightRecords).toBe(1);
    const second = t.open(0, '20', 10);
    second.hold(10);
    second.seal();
    second.release(10); // delivered, but its offset cannot commit before the first chunk's
    expect(commits).toEqual([]);
    expect(t.inFlightRecords).toBe(1);
    first.release();
    expect(commits.at(-1)).toEqual([0, '20']);
    expect(t.inFlightRecords).toBe(0);
  });

  it('forgets a revoked partition and ignores what its chunks release later', () => {
    const { t } = tracker(100);
    const a = t.open(3, '5', 5);
    a.hold(5);
    a.seal();
    t.forget(3);
    expect(t.inFlightRecords).toBe(0);
    a.release(5);
    expect(t.inFlightRecords).toBe(0);
  });

  it('refuses a release without a hold', () => {
    const { t } = tracker();
    const a = t.open(0, '1', 1);
    a.seal();
    expect(() => a.release()).toThrow(/more often than held/);
  });

  it('after a rejoin with a fresh consumer, never commits past a chunk the old consumer left unsettled', () => {
    // kafka-source.ts keeps one tracker across a crash and rejoin: the old consumer's chunks stay in
    // the queue and the fresh consumer re-reads from the last commit, so one partition queues
    // 100-199 (old, in retry), 200-299 (old, delivered), then 100-199 and 200-299 again (re-read).
    const { t, commits } = tracker();
    const old1 = t.open(3, '200', 100);
    old1.hold();
    old1.seal();
    const old2 = t.open(3, '300', 100);
    old2.seal();
    const again1 = t.open(3, '200', 100);
    again1.seal(); // the re-read copy of 100-199 settles first (say, parked by the new consumer's routing)
    const again2 = t.open(3, '300', 100);
    again2.seal();
    expect(commits).toEqual([]); // 100-199 of the old consumer still holds everything behind it
    old1.release();
    expect(commits).toEqual([[3, '300']]);
    expect(t.inFlightRecords).toBe(0);
  });
});
