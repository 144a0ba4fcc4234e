/**
 * kafkajs 2.2's consumer batch (consumer/batch.js: a fetch's messages of one partition) made
 * without a BigInt-backed `Long` for every message, installed in place of kafkajs's own before
 * kafkajs loads it, as the record decoder is (kafka-record-decoder.ts).
 *
 * kafkajs's constructor keeps the messages at or after the fetched offset by parsing each
 * message's offset string into its `Long` and comparing, and copies the array twice (that filter,
 * then one for control records), for every message of every fetch: a `Long` and its BigInt a
 * message, about 6% of what the worker allocated a record. Here offsets are compared as numbers
 * where both are exact (below 2^53), each message's by kafkajs's own `Long` otherwise, and an array
 * is copied only when a message is left out: the same fields, equal arrays. The methods are
 * kafkajs's: the batch is made with kafkajs's prototype.
 *
 * `installBatch` reports whether it was installed: a kafkajs other than 2.2.x, or one whose
 * consumer group module was loaded already (it holds the class it required), keeps its own.
 */
import { kafkajsRequire as require, replaceKafkajsModule } from './kafkajs-module.js';

const BATCH = 'kafkajs/src/consumer/batch.js';
const CONSUMER_GROUP = 'kafkajs/src/consumer/consumerGroup.js';

export interface BatchMessage {
  offset: string;
  isControlRecord?: boolean;
}

interface PartitionData {
  partition: number;
  highWatermark: string;
  messages: BatchMessage[];
  abortedTransactions?: unknown[];
}

interface LongValue {
  gte(other: LongValue): boolean;
}
export interface LongClass {
  fromValue(v: unknown): LongValue;
}
export type FilterAborted = (a: { messages: BatchMessage[]; abortedTransactions?: unknown[] | undefined }) => BatchMessage[];

export interface BatchFields {
  fetchedOffset: unknown;
  topic: string;
  partition: number;
  highWatermark: string;
  rawMessages: BatchMessage[];
  messagesWithinOffset: BatchMessage[];
  messages: BatchMessage[];
}

/** An offset as a number where it is one exactly (a safe integer), else undefined. */
function exactOffset(v: unknown): number | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The constructor of a batch with kafkajs's prototype (`prototype`: kafkajs's Batch's), its fields
 * as kafkajs's constructor sets them, in its order.
 */
export function batchConstructor(prototype: object, Long: LongClass, filterAborted: FilterAborted): new (topic: string, fetchedOffset: unknown, data: PartitionData) => BatchFields {
  function withinOffset(messages: BatchMessage[], fetchedOffset: unknown): BatchMessage[] {
    const fetched = exactOffset(fetchedOffset);
    let longFetched: LongValue | undefined;
    const keeps = (m: BatchMessage): boolean => {
      const offset = fetched === undefined ? undefined : exactOffset(m.offset);
      if (offset !== undefined) return offset >= fetched!;
      return Long.fromValue(m.offset).gte((longFetched ??= Long.fromValue(fetchedOffset)));
    };
    for (let i = 0; i < messages.length; i++) if (!keeps(messages[i]!)) return messages.filter(keeps);
    return messages;
  }

  function Batch(this: BatchFields, topic: string, fetchedOffset: unknown, partitionData: PartitionData): void {
    this.fetchedOffset = fetchedOffset;
    const { abortedTransactions, messages } = partitionData;
    this.topic = topic;
    this.partition = partitionData.partition;
    this.highWatermark = partitionData.highWatermark;
    this.rawMessages = messages;
    this.messagesWithinOffset = withinOffset(messages, fetchedOffset);
    const unaborted = filterAborted({ messages: this.messagesWithinOffset, abortedTransactions });
    this.messages = unaborted.some((m) => m.isControlRecord) ? unaborted.filter((m) => !m.isControlRecord) : unaborted;
  }
  Batch.prototype = prototype;
  return Batch as unknown as new (topic: string, fetchedOffset: unknown, data: PartitionData) => BatchFields;
}

let installed: boolean | undefined;

/** Puts the batch constructor in Node's module cache as kafkajs's consumer batch, once; true if kafkajs will use it. */
export function installBatch(): boolean {
  return (installed ??= replaceKafkajsModule(BATCH, CONSUMER_GROUP, () =>
    batchConstructor(
      (require(BATCH) as { prototype: object }).prototype,
      require('kafkajs/src/utils/long.js') as LongClass,
      require('kafkajs/src/consumer/filterAbortedMessages.js') as FilterAborted,
    ),
  ));
}

installBatch();
