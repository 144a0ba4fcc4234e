/** Turns of the event loop and the embedded store's statement gate (event-loop.ts): order and turns, never durations. */
import { describe, expect, it } from 'vitest';
import { nextTurn, slicer, turnGate } from '../../src/event-loop.js';

describe('nextTurn', () => {
  it('resumes every task that yielded in a turn together on the next one, its clock started once', async () => {
    const order: string[] = [];
    const first = nextTurn().then(() => order.push('first task'));
    setImmediate(() => order.push('an immediate queued between them'));
    const second = nextTurn().then(() => order.push('second task'));
    await Promise.all([first, second]);
    expect(order.slice(0, 2)).toEqual(['first task', 'second task']);
  });
});

describe('slicer', () => {
  /** Notes 'turn' once a turn of the event loop (an immediate queuing the next) until stopped. */
  function turns(log: string[]): () => void {
    let on = true;
    const tick = () => {
      if (!on) return;
      log.push('turn');
      setImmediate(tick);
    };
    setImmediate(tick);
    return () => void (on = false);
  }

  it('resumes one task a turn, in the order they yielded: a turn holds at most one step past the budget', async () => {
    const log: string[] = [];
    const stop = turns(log);
    // A budget of 0 is spent before every step: each step is past it.
    const task = async (name: string) => {
      const turn = slicer(0);
      for (let step = 1; step <= 3; step++) {
        await turn();
        log.push(`${name}${step}`);
      }
    };
    await Promise.all([task('a'), task('b'), task('c')]);
    stop();
    const steps = log.join(' ').split('turn').map((t) => t.trim().split(' ').filter(Boolean));
    for (const inOneTurn of steps) expect(inOneTurn.length, `one turn held ${inOneTurn.join(', ')}`).toBeLessThanOrEqual(1);
    expect(log.filter((e) => e !== 'turn')).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'c2', 'a3', 'b3', 'c3']);
  });

  it('lets a task step on without yielding while the budget lasts', () => {
    const turn = slicer(Number.POSITIVE_INFINITY);
    expect(turn()).toBeUndefined();
  });
});

describe('turnGate', () => {
  it('hands on to a request statement before a background one queued earlier', async () => {
    const gate = turnGate(Number.POSITIVE_INFINITY);
    const order: string[] = [];
    await gate.enter();
    const bulk = gate.enter(true).then(() => order.push('bulk'));
    const request = gate.enter().then(() => order.push('request'));
    gate.leave();
    await request;
    gate.leave();
    await bulk;
    gate.leave();
    expect(order).toEqual(['request', 'bulk']);
  });

  it('hands on on a later turn once the budget is spent: I/O callbacks queued meanwhile run first', async () => {
    const gate = turnGate(0);
    const order: string[] = [];
    await gate.enter();
    const next = gate.enter().then(() => order.push('next statement'));
    setImmediate(() => order.push('other work of the turn'));
    gate.leave();
    await next;
    gate.leave();
    expect(order).toEqual(['other work of the turn', 'next statement']);
  });

  it('hands on within the turn while the budget lasts', async () => {
    const gate = turnGate(Number.POSITIVE_INFINITY);
    const order: string[] = [];
    await gate.enter();
    const next = gate.enter().then(() => order.push('next statement'));
    setImmediate(() => order.push('other work of the turn'));
    gate.leave();
    await next;
    gate.leave();
    expect(order[0]).toBe('next statement');
  });
});
