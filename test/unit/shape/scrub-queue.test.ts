/**
 * The scrub pool's start order (scrub-queue.ts): an organization with nothing running is served
 * before one with jobs running, equals in turn, each organization's jobs in the order they came,
 * and past the cap an organization's jobs wait in its own backlog.
 */
import { describe, expect, it } from 'vitest';
import { FairScrubQueue, SCRUB_MAX_QUEUED_PER_ORG } from '../../../src/shape/scrub-queue.js';

/** Takes jobs while `threads` are free, finishing the oldest running first; returns the start order. */
function run(q: FairScrubQueue<string>, threads: number, onStart: (job: string) => void = () => {}): string[] {
  const started: string[] = [];
  const running: { orgId: string; job: string }[] = [];
  for (;;) {
    while (running.length < threads) {
      const next = q.take();
      if (!next) break;
      running.push(next);
      started.push(next.job);
      onStart(next.job);
    }
    const done = running.shift();
    if (!done) return started;
    q.finished(done.orgId);
  }
}

describe('fair scrub queue', () => {
  it('starts a second organization\'s job as soon as a thread frees, ahead of a flooder\'s queue', () => {
    for (const threads of [1, 2, 4]) {
      const q = new FairScrubQueue<string>();
      for (let i = 0; i < 50; i++) q.push('flood', `f${i}`);
      let startsBeforeVictim = -1;
      const started = run(q, threads, (job) => {
        // The victim's record comes while the flooder's first jobs run on every thread.
        if (job === `f${threads - 1}`) {
          q.push('victim', 'v');
          startsBeforeVictim = threads;
        }
      });
      // Not one more of the flooder's jobs started between the victim's coming and its start.
      expect(started.indexOf('v') - startsBeforeVictim).toBe(0);
      expect(started.indexOf('v')).toBe(threads);
      expect(started.filter((j) => j !== 'v')).toEqual(Array.from({ length: 50 }, (_, i) => `f${i}`));
    }
  });

  it('serves organizations with work in turn', () => {
    const q = new FairScrubQueue<string>();
    for (let i = 0; i < 3; i++) for (const org of ['a', 'b', 'c']) q.push(org, `${org}${i}`);
    q.push('a', 'a3');
    q.push('a', 'a4');
    expect(run(q, 1)).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'b2', 'c2', 'a3', 'a4']);
  });

  it('keeps an organization past its cap in its own backlog, in order, never ahead of another', () => {
    const q = new FairScrubQueue<string>(3);
    for (let i = 0; i < 10; i++) q.push('flood', `f${i}`);
    expect(q.waiting('flood')).toEqual({ queued: 3, backlogged: 7 });
    q.push('other', 'o0');
    expect(q.waiting('other')).toEqual({ queued: 1, backlogged: 0 });
    const first = q.take()!;
    expect(first).toEqual({ orgId: 'flood', job: 'f0' });
    // A job started moves the backlog's oldest up; the queue stays at the cap.
    expect(q.waiting('flood')).toEqual({ queued: 3, backlogged: 6 });
    expect(q.take()).toEqual({ orgId: 'other', job: 'o0' });
    q.finished('flood');
    q.finished('other');
    expect(run(q, 2)).toEqual(['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9']);
    expect(q.waiting('flood')).toEqual({ queued: 0, backlogged: 0 });
    expect(SCRUB_MAX_QUEUED_PER_ORG).toBe(32);
  });

  it('gives every job back at close, queued and backlogged', () => {
    const q = new FairScrubQueue<string>(2);
    for (let i = 0; i < 5; i++) q.push('a', `a${i}`);
    q.push('b', 'b0');
    expect(q.take()!.job).toBe('a0');
    expect(q.drain().sort()).toEqual(['a1', 'a2', 'a3', 'a4', 'b0']);
    expect(q.take()).toBeUndefined();
  });

  it('refuses a cap that is not a positive integer', () => {
    expect(() => new FairScrubQueue(0)).toThrow(/positive integer/);
  });
});
