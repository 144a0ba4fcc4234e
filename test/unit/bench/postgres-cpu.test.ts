import { describe, expect, it } from 'vitest';
import { postgresCpu, postgresCpuBetween, type PostgresCpu } from '../../../bench/e2e/proc-stat.js';

const reading = (own: Record<number, number>, reaped: number): PostgresCpu => ({ own: new Map(Object.entries(own).map(([p, s]) => [Number(p), s])), reaped });

describe('the Postgres CPU a benchmark run is charged', () => {
  it('is what running processes spent in the window, plus those started in it', () => {
    const start = reading({ 1: 1.0, 10: 5.0 }, 2.0);
    const end = reading({ 1: 1.1, 10: 5.4, 11: 0.3 }, 2.0);
    expect(postgresCpuBetween(start, end)).toBeCloseTo(0.1 + 0.4 + 0.3, 9);
  });

  it('charges a backend that exits in the window only for what it spent after the first reading', () => {
    // The seed connection had spent 22 s before the run; it spends 0.2 s more and exits, and the
    // postmaster reaps its whole 22.2 s.
    const start = reading({ 1: 1.0, 20: 22.0 }, 0);
    const end = reading({ 1: 1.0 }, 22.2);
    expect(postgresCpuBetween(start, end)).toBeCloseTo(0.2, 9);
  });

  it('charges a backend started and reaped inside the window for its whole life', () => {
    const start = reading({ 1: 1.0 }, 3.0);
    const end = reading({ 1: 1.0 }, 3.5);
    expect(postgresCpuBetween(start, end)).toBeCloseTo(0.5, 9);
  });

  it('reads only the given postmaster and its children from /proc', () => {
    // This test process is no postmaster: no postgres process has it as parent.
    const none = postgresCpu(process.pid);
    expect(none.own.size).toBe(0);
    expect(none.reaped).toBe(0);
  });
});
