/** Turns of the event loop and the embedded store's statement gate (event-loop.ts): order and turns, never durations. */
import { describe, expect, it } from 'vitest';
import { nextTurn, turnGate } from '../../src/event-loop.js';

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
