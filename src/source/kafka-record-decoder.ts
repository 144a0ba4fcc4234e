/**
 * A faster decoder of a Kafka record (the v2 record format's record, inside a record batch) for
 * kafkajs, installed in place of kafkajs's own before kafkajs loads it.
 *
 * kafkajs 2.2 decodes every record's timestamp and offset with its BigInt-backed `Long`: the
 * timestamp delta's varlong a `Long` op or three per byte, its zigzag five more, then the batch's
 * first timestamp and first offset parsed again from their strings for every record, added to and
 * printed back. That was a tenth of everything the worker allocated (72 of 700 MB for 100,000
 * records), and decoding a batch takes about 40% less CPU without it (docs/benchmarks-engine-findings.md,
 * kafkajs's records). This decoder reads the varlong as a number, parses the batch's first
 * timestamp and offset once a batch, and adds in numbers wherever the results are exact (bases
 * below 2^52, so a base and its delta stay below 2^53); anything larger goes the way kafkajs goes,
 * so the answer is kafkajs's own in every case: the same object, with the same fields, in the same
 * order.
 *
 * Installed through Node's module cache: kafkajs's record batch decoder takes its record decoder
 * with `require('../record/v0/decoder')` when it is first loaded, so the entry must be in the cache
 * before then. `installRecordDecoder` reports whether it was: a kafkajs other than the version
 * this was written against, or one whose batch decoder was loaded already, keeps its own decoder.
 */
import { kafkajsRequire as require, replaceKafkajsModule } from './kafkajs-module.js';

const RECORD_DECODER = 'kafkajs/src/protocol/recordBatch/record/v0/decoder.js';
const BATCH_DECODER = 'kafkajs/src/protocol/recordBatch/v0/decoder.js';

interface KafkaDecoder {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarLong(): { toString(): string; add(other: unknown): { toString(): string } };
  readVarIntBytes(): Buffer | null;
  readVarIntArray<T>(reader: (d: KafkaDecoder) => T): T[];
}

interface BatchContext {
  firstOffset: string;
  firstTimestamp: string;
  magicByte: number;
  isControlBatch?: boolean;
  timestampType: number;
  maxTimestamp: string;
}

export interface DecodedRecord {
  magicByte: number;
  attributes: number;
  timestamp: string;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | null | (Buffer | null)[]>;
  isControlRecord: boolean;
  batchContext: BatchContext;
}

type Long = { add(other: unknown): { toString(): string } };
interface LongClass {
  fromValue(v: unknown): Long;
  fromInt(v: number): unknown;
}

/** kafkajs's timestamp type of a batch whose records carry the broker's append time. */
const LOG_APPEND_TIME = 1;
/** A varlong of at most seven bytes holds at most 49 bits: its zigzag decoding is exact in a number. */
const MAX_NUMBER_VARLONG_BYTES = 7;

/**
 * The record decoder, given kafkajs's `Long` and header decoder (for what is not exact in numbers,
 * and for headers, which the records of this platform do not carry).
 */
export function recordDecoder(Long: LongClass, headerDecoder: (d: KafkaDecoder) => { key: string; value: Buffer | null }) {
  // The batch whose first timestamp and offset were parsed last: a batch's records are decoded one
  // after another, so one entry serves them all. NaN: not exact in a number (kafkajs's way then).
  let context: BatchContext | undefined;
  let firstTimestamp = NaN;
  let firstOffset = NaN;

  const exactBase = (text: string): number => {
    const n = Number(text);
    // Far enough below 2^53 that adding a delta (an offset's 32 bits, a timestamp's at most 48 here) stays exact.
    return Number.isSafeInteger(n) && Math.abs(n) < 2 ** 52 ? n : NaN;
  };

  /** The zigzag varlong as a number, or undefined (the decoder left where it was) when it may not be exact. */
  const varLongNumber = (decoder: KafkaDecoder): number | undefined => {
    const buffer = decoder.buffer;
    let at = decoder.offset;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < MAX_NUMBER_VARLONG_BYTES; i++) {
      const byte = buffer[at++];
      if (byte === undefined) return undefined;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        decoder.offset = at;
        // zigzag: 2n for n >= 0, -2n - 1 for n < 0.
        return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
      }
      scale *= 128;
    }
    return undefined;
  };

  const headersOf = (decoder: KafkaDecoder): DecodedRecord['headers'] => {
    const headers: DecodedRecord['headers'] = {};
    for (const { key, value } of decoder.readVarIntArray(headerDecoder)) {
      const seen = headers[key];
      headers[key] = seen === undefined ? value : Array.isArray(seen) ? seen.concat([value]) : [seen, value];
    }
    return headers;
  };

  return (decoder: KafkaDecoder, batchContext: BatchContext = {} as BatchContext): DecodedRecord => {
    const { magicByte, isControlBatch = false, timestampType, maxTimestamp } = batchContext;
    if (batchContext !== context) {
      context = batchContext;
      firstTimestamp = exactBase(batchContext.firstTimestamp);
      firstOffset = exactBase(batchContext.firstOffset);
    }
    const attributes = decoder.readInt8();

    // The delta is read whatever the timestamp type: the record's fields follow it.
    const delta = varLongNumber(decoder) ?? decoder.readVarLong();
    const timestamp =
      timestampType === LOG_APPEND_TIME && maxTimestamp
        ? maxTimestamp
        : typeof delta === 'number' && !Number.isNaN(firstTimestamp)
          ? String(firstTimestamp + delta)
          : Long.fromValue(batchContext.firstTimestamp).add(typeof delta === 'number' ? Long.fromInt(delta) : delta).toString();

    const offsetDelta = decoder.readVarInt();
    const offset = Number.isNaN(firstOffset)
      ? Long.fromValue(batchContext.firstOffset).add(offsetDelta).toString()
      : String(firstOffset + offsetDelta);

    const key = decoder.readVarIntBytes();
    const value = decoder.readVarIntBytes();
    const headers = headersOf(decoder);

    return { magicByte, attributes, timestamp, offset, key, value, headers, isControlRecord: isControlBatch, batchContext };
  };
}

let installed: boolean | undefined;

/**
 * Puts the decoder in Node's module cache as kafkajs's record decoder, once. True if kafkajs will
 * use it: the version matches and its batch decoder has not been loaded yet.
 */
export function installRecordDecoder(): boolean {
  return (installed ??= replaceKafkajsModule(RECORD_DECODER, BATCH_DECODER, () =>
    recordDecoder(
      require('kafkajs/src/utils/long.js') as LongClass,
      require('kafkajs/src/protocol/recordBatch/header/v0/decoder.js') as (d: KafkaDecoder) => { key: string; value: Buffer | null },
    ),
  ));
}

installRecordDecoder();
