import { describe, expect, it } from 'vitest';
import { ParkingSet } from '../../../src/backlog/parking.js';

describe('ParkingSet', () => {
  it('keeps a drain whose park is still being written when the pump reads an empty backlog', () => {
    const p = new ParkingSet();
    const landed = p.parking('d1');
    expect(p.has('d1')).toBe(true);
    const mark = p.mark();
    p.reset([], mark); // the store did not show the rows yet
    expect(p.has('d1')).toBe(true);
    p.clear('d1', mark);
    expect(p.has('d1')).toBe(true);
    landed();
    // Landed after the read began: that read may have missed it.
    p.reset([], mark);
    expect(p.has('d1')).toBe(true);
    // A read that began after it landed is the truth.
    p.reset([], p.mark());
    expect(p.has('d1')).toBe(false);
  });

  it('clears a drain once a read begun after its last park shows the backlog empty', () => {
    const p = new ParkingSet();
    p.add('d1');
    const before = p.mark() - 1;
    p.clear('d1', before);
    expect(p.has('d1')).toBe(true);
    p.clear('d1', p.mark());
    expect(p.has('d1')).toBe(false);
  });

  it('takes the drains the store shows, dropping settled ones', () => {
    const p = new ParkingSet();
    p.add('gone');
    p.reset(['d2', 'd3'], p.mark());
    expect([p.has('gone'), p.has('d2'), p.has('d3'), p.size]).toEqual([false, true, true, 2]);
  });
});

describe('ParkingSet holds', () => {
  it('keeps a held drain parked through refreshes that show no backlog, and after release until a read shows it empty', () => {
    const p = new ParkingSet();
    p.hold('d1');
    p.reset([], p.mark());
    p.clear('d1', p.mark());
    expect(p.has('d1')).toBe(true);
    const before = p.mark();
    p.release('d1');
    // Released: parked as any drain with a backlog, until a read begun after the release shows it empty.
    p.clear('d1', before);
    expect(p.has('d1')).toBe(true);
    p.clear('d1', p.mark());
    expect(p.has('d1')).toBe(false);
    expect(p.size).toBe(0);
  });
});
