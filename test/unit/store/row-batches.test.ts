/** The writes of one row gathered into one statement while the row's last one runs (src/store/row-batches.ts). */
import { describe, expect, it } from 'vitest';
import { rowBatches } from '../../../src/store/row-batches.js';

/** A write that records each statement's items and answers when `release` is called. */
function recorder(fail?: (items: string[]) => Error | undefined) {
  const statements: { row: string; items: string[] }[] = [];
  const pending: (() => void)[] = [];
  const write = (row: string, items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      statements.push({ row, items });
      pending.push(() => {
        const e = fail?.(items);
        if (e) reject(e);
        else resolve(items.map((i) => `${row}:${i}`));
      });
    });
  /** Answers the statements running, and those they lead to, until none is left. */
  const settle = async () => {
    for (let turns = 0; turns < 100; turns++) {
      await new Promise((r) => setImmediate(r));
      const next = pending.shift();
      if (next) next();
    }
  };
  return { statements, write, settle };
}

describe('rowBatches', () => {
  it('the first write runs alone; those that came while it ran go together, in their order; each gets its own answer', async () => {
    const r = recorder();
    const write = rowBatches(r.write);
    const answers = Promise.all(['a', 'b', 'c', 'd'].map((i) => write('row1', i)));
    await r.settle();
    expect(await answers).toEqual(['row1:a', 'row1:b', 'row1:c', 'row1:d']);
    expect(r.statements).toEqual([{ row: 'row1', items: ['a'] }, { row: 'row1', items: ['b', 'c', 'd'] }]);
  });

  it('rows do not wait for each other', async () => {
    const r = recorder();
    const write = rowBatches(r.write);
    const answers = Promise.all([write('row1', 'a'), write('row2', 'b')]);
    expect(r.statements.map((s) => s.row)).toEqual(['row1', 'row2']);
    await r.settle();
    expect(await answers).toEqual(['row1:a', 'row2:b']);
  });

  it('cuts a batch at max writes and at maxWeight, but never below one write', async () => {
    const r = recorder();
    const write = rowBatches(r.write, { max: 2, weigh: (i: string) => i.length, maxWeight: 3 });
    const answers = Promise.all(['first', 'a', 'b', 'c', 'dddd', 'e'].map((i) => write('row1', i)));
    await r.settle();
    await answers;
    expect(r.statements.map((s) => s.items)).toEqual([['first'], ['a', 'b'], ['c'], ['dddd'], ['e']]);
  });

  it('a statement that fails for several runs again for each alone: only the refused write fails', async () => {
    const r = recorder((items) => (items.includes('bad') ? new Error('refused') : undefined));
    const write = rowBatches(r.write);
    const settled = Promise.allSettled(['a', 'b', 'bad', 'c'].map((i) => write('row1', i)));
    await r.settle();
    const outcomes = (await settled).map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message));
    expect(outcomes).toEqual(['row1:a', 'row1:b', 'refused', 'row1:c']);
    expect(r.statements.map((s) => s.items)).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
  });

  it('with againAlone false, a statement that fails fails each of its writes once, and none runs again', async () => {
    const r = recorder((items) => (items.length > 1 ? new Error('store down') : undefined));
    const write = rowBatches(r.write, { againAlone: () => false });
    const settled = Promise.allSettled(['a', 'b', 'c', 'd'].map((i) => write('row1', i)));
    await r.settle();
    const outcomes = (await settled).map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message));
    expect(outcomes).toEqual(['row1:a', 'store down', 'store down', 'store down']);
    expect(r.statements.map((s) => s.items)).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('a row is free again once its last statement answered', async () => {
    const r = recorder();
    const write = rowBatches(r.write);
    const first = write('row1', 'a');
    await r.settle();
    await first;
    const second = write('row1', 'b');
    expect(r.statements.at(-1)).toEqual({ row: 'row1', items: ['b'] });
    await r.settle();
    expect(await second).toBe('row1:b');
  });
});
