import { describe, expect, it } from 'vitest';
import { ParkingSet } from '../../../src/backlog/parking.js';
import { SpillPolicy } from '../../../src/backlog/spill.js';

function policy(belowRecords = 10) {
  let now = 0;
  const parking = new ParkingSet(() => now);
  const changes: [string, boolean][] = [];
  const spill = new SpillPolicy({
    belowRecords, lingerMs: 30_000, batchLingerMs: 1000, parking, now: () => now,
    onChange: (d, s) => changes.push([d, s]),
  });
  return { spill, parking, changes, advance: (ms: number) => (now += ms) };
}

/** `batches` live batches of `records` records each, spread over a second, then one more to close the window. */
function feed(p: ReturnType<typeof policy>, drainId: string, batches: number, records: number) {
  for (let i = 0; i < batches; i++) {
    p.spill.observe(drainId, records);
    p.advance(1000 / batches);
  }
  p.spill.observe(drainId, records);
}

describe('SpillPolicy', () => {
  it('spills a drain sending many small live batches, holding it parked', () => {
    const p = policy();
    feed(p, 'd1', 200, 2);
    expect(p.spill.isSpilling('d1')).toBe(true);
    expect(p.parking.has('d1')).toBe(true);
    expect(p.changes).toEqual([['d1', true]]);
  });

  it('leaves alone a drain with full batches, or with only a few small ones', () => {
    const p = policy();
    feed(p, 'full', 200, 50);
    feed(p, 'few', 10, 1);
    expect(p.spill.isSpilling('full')).toBe(false);
    expect(p.spill.isSpilling('few')).toBe(false);
    expect(p.parking.has('few')).toBe(false);
  });

  it('is off when BATCH_SPILL_BELOW_RECORDS is 0', () => {
    const p = policy(0);
    feed(p, 'd1', 500, 1);
    expect(p.spill.enabled).toBe(false);
    expect(p.spill.isSpilling('d1')).toBe(false);
  });

  it('makes a round due one spill linger after the spill or the last round while records keep coming', () => {
    const p = policy();
    feed(p, 'd1', 200, 1);
    expect(p.spill.roundDue('d1')).toBe(false);
    // Records of the drain parked every second: the round waits for the spill linger.
    for (let t = 0; t < 29; t++) {
      p.advance(1000);
      p.parking.add('d1');
      expect(p.spill.roundDue('d1')).toBe(false);
    }
    p.advance(999);
    expect(p.spill.roundDue('d1')).toBe(false);
    p.advance(1);
    expect(p.spill.roundDue('d1')).toBe(true);
    // 10,000 agents, 300,000 records in 30 s: one an agent a second, so live batches would hold 1.
    p.spill.roundDone('d1', { records: 300_000, resources: 10_000 });
    expect(p.spill.isSpilling('d1')).toBe(true);
    expect(p.spill.roundDue('d1')).toBe(false);
    // A drain not spilling is never held back.
    expect(p.spill.roundDue('other')).toBe(true);
  });

  it('makes a round due early once the drain\'s records stop coming (a quarter of the spill linger without a park)', () => {
    const p = policy();
    feed(p, 'd1', 200, 1);
    p.advance(1000);
    p.parking.add('d1');
    p.advance(7499);
    expect(p.spill.roundDue('d1')).toBe(false);
    p.advance(1);
    expect(p.spill.roundDue('d1')).toBe(true);
  });

  it('ends the spill when a round shows live batches would fill, or finds nothing: parked until the backlog is empty', () => {
    const p = policy();
    feed(p, 'd1', 200, 1);
    p.advance(30_000);
    // 8 agents, 300,000 records in 30 s: 1,250 an agent a second.
    const mark = p.parking.mark();
    p.spill.roundDone('d1', { records: 300_000, resources: 8 });
    expect(p.spill.isSpilling('d1')).toBe(false);
    expect(p.changes.at(-1)).toEqual(['d1', false]);
    p.parking.clear('d1', mark);
    expect(p.parking.has('d1')).toBe(true);
    p.parking.clear('d1', p.parking.mark());
    expect(p.parking.has('d1')).toBe(false);

    feed(p, 'd2', 200, 1);
    p.advance(30_000);
    p.spill.roundDone('d2', { records: 0, resources: 0 });
    expect(p.spill.isSpilling('d2')).toBe(false);
  });

  it('forgets a deleted drain: no longer spilling, no longer held parked', () => {
    const p = policy();
    feed(p, 'd1', 200, 1);
    p.spill.forget('d1');
    expect(p.spill.isSpilling('d1')).toBe(false);
    expect(p.spill.drains()).toEqual([]);
    p.parking.clear('d1', p.parking.mark());
    expect(p.parking.has('d1')).toBe(false);
  });
});
