/**
 * The Kafka record decoder installed in place of kafkajs's (src/source/kafka-record-decoder.ts):
 * records written by kafkajs's own encoder decode to exactly what kafkajs's own decoder gives, on
 * the number path and on the paths that fall back to kafkajs's Long, and a record batch decoded by
 * kafkajs's batch decoder (plain and gzip) goes through it.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { installRecordDecoder, recordDecoder, type DecodedRecord } from '../../../src/source/kafka-record-decoder.js';
import { batchDecoderWith, stockRecordDecoder } from '../../helpers/kafkajs-stock.js';

const require = createRequire(import.meta.url);
type Fn = (...args: unknown[]) => unknown;
const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: unknown): unknown; fromInt(v: number): unknown };
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => unknown;
const recordEncoder = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (r: object) => { buffer: Buffer };
const headerDecoder = require('kafkajs/src/protocol/recordBatch/header/v0/decoder.js') as Fn;

const stock = stockRecordDecoder() as Fn;
const fast = recordDecoder(Long as never, headerDecoder as never) as unknown as Fn;

/** A record's bytes as its batch holds them: the record encoder's output less its length varint. */
function recordBytes(r: object): Buffer {
  const framed = new Decoder(recordEncoder(r).buffer) as { readVarIntBytes(): Buffer };
  return framed.readVarIntBytes();
}

const decodeWith = (decode: Fn, bytes: Buffer, context: object): { record: DecodedRecord; offset: number } => {
  const d = new Decoder(bytes) as { offset: number };
  const record = decode(d, context) as DecodedRecord;
  return { record, offset: d.offset };
};

const contexts = [
  { firstOffset: '0', firstTimestamp: '1764547200000', magicByte: 2, timestampType: 0, maxTimestamp: '1764547201000' },
  { firstOffset: '123456789', firstTimestamp: '1764547200000', magicByte: 2, isControlBatch: true, timestampType: 0, maxTimestamp: '1764547201000' },
  // Offsets and timestamps past what a number holds exactly: kafkajs's Long path.
  { firstOffset: '9007199254740993', firstTimestamp: '9007199254740993', magicByte: 2, timestampType: 0, maxTimestamp: '1' },
  { firstOffset: '4503599627370495', firstTimestamp: '-4503599627370497', magicByte: 2, timestampType: 0, maxTimestamp: '1' },
  // The broker's append time: every record takes the batch's max timestamp.
  { firstOffset: '42', firstTimestamp: '1764547200000', magicByte: 2, timestampType: 1, maxTimestamp: '1764547299999' },
];

const records = [
  { offsetDelta: 0, timestampDelta: 0, key: Buffer.from('org_a'), value: Buffer.from('{"a":1}') },
  { offsetDelta: 7, timestampDelta: 1234, key: null, value: Buffer.from('x'.repeat(300)) },
  { offsetDelta: 2 ** 31 - 1, timestampDelta: -5000, key: Buffer.from(''), value: null },
  { offsetDelta: 3, timestampDelta: 2 ** 47, key: Buffer.from('k'), value: Buffer.from('v') },
  // Past seven varlong bytes: kafkajs's Long reads it.
  { offsetDelta: 4, timestampDelta: Long.fromValue('1152921504606846975'), key: Buffer.from('k'), value: Buffer.from('v') },
  { offsetDelta: 5, timestampDelta: Long.fromValue('-4611686018427387904'), key: Buffer.from('k'), value: Buffer.from('v') },
  { offsetDelta: 6, timestampDelta: 1, key: Buffer.from('k'), value: Buffer.from('v'), headers: { trace: Buffer.from('t1') } },
  { offsetDelta: 8, timestampDelta: 2, key: Buffer.from('k'), value: Buffer.from('v'), headers: { a: [Buffer.from('1'), Buffer.from('2'), Buffer.from('3')], b: Buffer.from('4') } },
];

describe('the Kafka record decoder', () => {
  it('decodes every record as kafkajs does, fields and their order', () => {
    let checked = 0;
    for (const context of contexts) {
      for (const r of records) {
        const bytes = recordBytes(r);
        const want = decodeWith(stock, bytes, context);
        const got = decodeWith(fast, bytes, context);
        expect(got.record).toEqual(want.record);
        expect(Object.keys(got.record)).toEqual(Object.keys(want.record));
        expect(got.record.batchContext).toBe(context);
        expect(got.offset).toBe(bytes.length);
        checked++;
      }
    }
    expect(checked).toBe(contexts.length * records.length);
  });

  it('reads a batch of records one after another, the base parsed once a batch, and never mixes two batches', () => {
    const [a, , , , appendTime] = contexts;
    const other = { ...a!, firstOffset: '1000', firstTimestamp: '1700000000000' };
    for (const context of [a!, other, a!, appendTime!]) {
      for (let i = 0; i < 50; i++) {
        const bytes = recordBytes({ offsetDelta: i, timestampDelta: i * 3 - 20, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) });
        expect(decodeWith(fast, bytes, context).record).toEqual(decodeWith(stock, bytes, context).record);
      }
    }
    const bytes = recordBytes({ offsetDelta: 9, timestampDelta: 10, key: null, value: Buffer.from('v') });
    expect(decodeWith(fast, bytes, other).record).toMatchObject({ offset: '1009', timestamp: '1700000000010' });
  });

  it('is what kafkajs decodes record batches with, plain and gzip', async () => {
    expect(installRecordDecoder()).toBe(true);
    const path = require.resolve('kafkajs/src/protocol/recordBatch/record/v0/decoder.js');
    expect(require.cache[path]?.exports).not.toBe(stock);
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (o: object) => Promise<{ buffer: Buffer }> };
    const batchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (d: unknown) => Promise<{ records: DecodedRecord[] }>;
    const { Types } = require('kafkajs/src/protocol/message/compression/index.js') as { Types: { None: number; GZIP: number } };
    for (const compression of [Types.None, Types.GZIP]) {
      const batch = await RecordBatch({
        compression, firstOffset: Long.fromValue('5000'), firstTimestamp: 1764547200000, maxTimestamp: 1764547200100, lastOffsetDelta: 2,
        records: [0, 1, 2].map((i) => recordEncoder({ offsetDelta: i, timestampDelta: i * 50, key: Buffer.from('org_a'), value: Buffer.from(`{"n":${i}}`) })),
      });
      // As a fetch answer holds it: the first offset, then the batch's length and the batch.
      const decoded = await batchDecoder(new Decoder(batch.buffer));
      expect(decoded.records.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString()])).toEqual([
        ['5000', '1764547200000', 'org_a', '{"n":0}'],
        ['5001', '1764547200050', 'org_a', '{"n":1}'],
        ['5002', '1764547200100', 'org_a', '{"n":2}'],
      ]);
      expect(decoded).toEqual(await batchDecoderWith(stock)(new Decoder(batch.buffer)));
    }
  });
});
