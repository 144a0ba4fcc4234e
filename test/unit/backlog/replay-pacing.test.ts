import { describe, expect, it } from 'vitest';
import { createReplayPacer, LIVE_WINDOW_MS, TURN_WAIT_MS } from '../../../src/backlog/replay-pacing.js';

/** A pacer on a clock and an in-flight count the test moves. */
function paced(maxShare: number) {
  const load = { now: 1_000_000, inFlight: 0, ready: true };
  const pacer = createReplayPacer({ maxShare, liveInFlight: () => load.inFlight, sourceReady: () => load.ready, now: () => load.now });
  return { pacer, load };
}

describe('replay pacing', () => {
  it('runs replays at full speed, several pages at once, while no live record flows', () => {
    const { pacer } = paced(0.2);
    expect(pacer.liveFlowing()).toBe(false);
    expect(pacer.take()).toBe(0);
    expect(pacer.take()).toBe(0);
    pacer.pageDone(400);
    pacer.pageDone(400);
    expect(pacer.take()).toBe(0);
  });

  it('after a page while live records flow, waits so that replays use at most their share of the time', () => {
    const { pacer, load } = paced(0.2);
    pacer.liveConsumed(500);
    expect(pacer.take()).toBe(0);
    load.now += 50;
    pacer.liveConsumed(500);
    pacer.pageDone(50);
    // 50 ms of replay work at a share of 0.2: 200 ms for live records before the next page.
    expect(pacer.take()).toBe(200);
    load.now += 150;
    pacer.liveConsumed(500);
    expect(pacer.take()).toBe(50);
    load.now += 50;
    pacer.liveConsumed(500);
    expect(pacer.take()).toBe(0);
  });

  it('gives replays one turn at a time while live records flow', () => {
    const { pacer } = paced(0.25);
    pacer.liveConsumed(1);
    expect(pacer.take()).toBe(0);
    expect(pacer.take()).toBe(TURN_WAIT_MS);
    pacer.pageDone(30);
    expect(pacer.take()).toBe(90);
  });

  it('counts records in flight as live traffic once the source has stopped handing any over', () => {
    const { pacer, load } = paced(0.5);
    pacer.liveConsumed(100);
    load.now += LIVE_WINDOW_MS;
    expect(pacer.liveFlowing()).toBe(false);
    load.inFlight = 100;
    expect(pacer.liveFlowing()).toBe(true);
    expect(pacer.take()).toBe(0);
    pacer.pageDone(40);
    expect(pacer.take()).toBe(40);
  });

  it('paces replays while the source is not reading yet: the live records waiting for it are not known', () => {
    const { pacer, load } = paced(0.2);
    load.ready = false;
    expect(pacer.liveFlowing()).toBe(true);
    expect(pacer.take()).toBe(0);
    pacer.pageDone(10);
    expect(pacer.take()).toBe(40);
    load.ready = true;
    expect(pacer.take()).toBe(0);
  });

  it('lets the replays go on at full speed once live records stop, so a replay ends', () => {
    const { pacer, load } = paced(0.1);
    pacer.liveConsumed(100);
    expect(pacer.take()).toBe(0);
    pacer.pageDone(100);
    expect(pacer.take()).toBe(900);
    // No record consumed for the live window and none in flight: the pause no longer holds.
    load.now += LIVE_WINDOW_MS;
    expect(pacer.take()).toBe(0);
    expect(pacer.take()).toBe(0);
  });

  it('with a share of 1, only takes turns: the next page goes at once', () => {
    const { pacer } = paced(1);
    pacer.liveConsumed(1);
    expect(pacer.take()).toBe(0);
    pacer.pageDone(500);
    expect(pacer.take()).toBe(0);
  });

  it('refuses a share outside (0, 1]', () => {
    expect(() => paced(0)).toThrow(RangeError);
    expect(() => paced(1.5)).toThrow(RangeError);
  });
});
