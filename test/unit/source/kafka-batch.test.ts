/**
 * The consumer batch installed in place of kafkajs's (src/source/kafka-batch.ts): for every fetch
 * it answers what kafkajs's own batch answers (its fields and every method), offsets past what a
 * number holds, messages before the fetched offset, control records and aborted transactions
 * included.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { batchConstructor, installBatch, type FilterAborted, type LongClass } from '../../../src/source/kafka-batch.js';
import { stockBatch } from '../../helpers/kafkajs-stock.js';

const require = createRequire(import.meta.url);
const Long = require('kafkajs/src/utils/long.js') as LongClass;
const filterAborted = require('kafkajs/src/consumer/filterAbortedMessages.js') as FilterAborted;
const Stock = stockBatch();
const Fast = batchConstructor(Stock.prototype as object, Long, filterAborted);

const METHODS = ['isEmpty', 'isEmptyIncludingFiltered', 'isEmptyDueToFiltering', 'isEmptyControlRecord', 'isEmptyDueToLogCompactedMessages', 'firstOffset', 'lastOffset', 'offsetLag', 'offsetLagLow'] as const;

const message = (offset: string, extra: object = {}) => ({ offset, key: Buffer.from('k'), value: Buffer.from(offset), isControlRecord: false, batchContext: { producerId: '7', inTransaction: false }, ...extra });
const offsets = (from: bigint, n: number) => Array.from({ length: n }, (_, i) => message(String(from + BigInt(i))));

function expectSame(fetchedOffset: unknown, data: { partition: number; highWatermark: string; messages: object[]; abortedTransactions?: object[] }): void {
  const a = new Stock('topic', fetchedOffset, data);
  const b = new Fast('topic', fetchedOffset, data as never) as unknown as Record<string, unknown>;
  expect(Object.keys(b)).toEqual(Object.keys(a));
  expect({ ...b }).toEqual({ ...a });
  for (const m of METHODS) expect([m, (b[m] as () => unknown).call(b)]).toEqual([m, (a[m] as () => unknown).call(a)]);
}

describe('the consumer batch', () => {
  it('keeps what kafkajs keeps when every message is at or after the fetched offset', () => {
    expectSame('100', { partition: 3, highWatermark: '200', messages: offsets(100n, 50) });
    expectSame(100, { partition: 3, highWatermark: '200', messages: offsets(100n, 5) });
    expectSame('0', { partition: 0, highWatermark: '0', messages: [] });
  });

  it('leaves out messages before the fetched offset (a compressed batch read from its start)', () => {
    expectSame('105', { partition: 1, highWatermark: '200', messages: offsets(100n, 20) });
    expectSame('500', { partition: 1, highWatermark: '600', messages: offsets(100n, 20) });
  });

  it("compares offsets past 2^53 as kafkajs's Long does", () => {
    const big = 9007199254740990n;
    expectSame(String(big + 3n), { partition: 2, highWatermark: String(big + 20n), messages: offsets(big, 10) });
    expectSame('9007199254740993', { partition: 2, highWatermark: '9007199254741000', messages: [message('9007199254740992'), message('9007199254740993'), message('9007199254740994')] });
    // A fetched offset a number holds beside message offsets it does not.
    expectSame('10', { partition: 2, highWatermark: '9007199254741000', messages: [message('9'), message('9007199254740993')] });
  });

  it('leaves out control records and the messages of aborted transactions', () => {
    const control = (offset: string) => message(offset, { isControlRecord: true, key: Buffer.from([0, 0, 0, 0]), batchContext: { producerId: '7', inTransaction: true } });
    const txn = (offset: string) => message(offset, { batchContext: { producerId: '7', inTransaction: true } });
    expectSame('10', { partition: 0, highWatermark: '20', messages: [message('10'), control('11'), message('12')] });
    expectSame('10', { partition: 0, highWatermark: '20', messages: [message('10'), txn('11'), txn('12'), control('13'), message('14')], abortedTransactions: [{ producerId: '7', firstOffset: '11' }] });
    expectSame('10', { partition: 0, highWatermark: '20', messages: [control('10')] });
  });

  it('is what kafkajs 2.2 uses once installed', () => {
    expect(installBatch()).toBe(true);
    const Installed = require('kafkajs/src/consumer/batch.js') as unknown;
    expect((Installed as { prototype: unknown }).prototype).toBe(require('kafkajs/src/consumer/batch.js').prototype);
    expect(String(Installed)).toContain('withinOffset');
  });
});
