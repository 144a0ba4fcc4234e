/**
 * What the pipeline reads from: the Kafka topic or the embedded queue. A
 * source hands over chunks of raw messages with a Ticket each and commits
 * positions the OffsetTracker reports as accounted for.
 */
import type { Ticket } from './offset-tracker.js';

export interface SourceChunk {
  messages: readonly (Buffer | string | null)[];
  ticket: Ticket;
}

export type ChunkHandler = (chunk: SourceChunk) => void;

export interface RecordSource {
  readonly name: 'kafka' | 'embedded';
  start(handler: ChunkHandler): Promise<void>;
  /**
   * Stops taking messages, waits until in-flight chunks settle, `idle`
   * resolves or the deadline passes, then commits what is accounted for.
   */
  stop(deadline: number, idle?: Promise<void>): Promise<void>;
  /** True once the source reads (consumer group joined, or the queue opened). */
  ready(): boolean;
  /** Records handed over and not yet accounted for (the MAX_IN_FLIGHT_RECORDS budget in use). */
  inFlightRecords(): number;
}
