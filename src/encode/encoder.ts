/**
 * Encoding apart from sending: an encoder turns one batch (one resource, its
 * records, a batch id) into the bytes of one request, before compression.
 * Each record's JSON is produced once, when it enters the batch; encoders
 * splice those strings rather than serialising the batch again.
 */
import type { Resource } from '../model/resource.js';
import type { DeliveredRecord } from '../shape/delivered-record.js';

/** Named by `schemaUrl` and `X-Svc-Schema`: the delivered batch schema, major version 1.0. */
export const SCHEMA_URL = 'https://schemas.svc.dev/log-drain/batch/1.0.json';

export interface BatchEntry {
  /** The record's id (delivery rows name a batch's first and last record, dropped records by id). */
  readonly id: string;
  record: DeliveredRecord;
  /** JSON.stringify(record), computed once (when first read: see ShapedEntry). */
  readonly json: string;
  /** Scrub matches replaced in this record. */
  scrubHits: number;
}

export interface EncodableBatch {
  batchId: string;
  resource: Resource;
  resourceJson: string;
  entries: readonly BatchEntry[];
}

export interface Encoder {
  readonly contentType: string;
  /**
   * Whether the encoder reads each entry's `json`. Those that do not (OTLP,
   * the vendors) never make the pipeline serialise a record it does not park,
   * and their batches are measured by the records' size as consumed.
   */
  readonly usesRecordJson: boolean;
  encode(batch: EncodableBatch): Buffer;
  /**
   * Takes back a body of this encoder's once its gzip and signature are made (body-pool.ts).
   * Present only on encoders whose every body is the caller's alone.
   */
  recycle?(body: Buffer): void;
  /** Records a 2xx answer says were refused (OTLP partial success); absent: never any. */
  rejectedRecords?(body: Buffer, contentType: string | undefined): number;
}

/** A shaped record whose JSON is made the first time an encoder, or the backlog, asks for it. */
export class ShapedEntry implements BatchEntry {
  private text: string | undefined;
  constructor(
    readonly record: DeliveredRecord,
    readonly scrubHits: number,
  ) {}

  get id(): string {
    return this.record.id;
  }

  get json(): string {
    return (this.text ??= JSON.stringify(this.record));
  }
}

/**
 * A shaped record held as its JSON alone, parsed back only if its record is read. Two uses: records
 * read back from the backlog, and records of drains whose encoders all read only the JSON (json,
 * ndjson). For those the shaped object is garbage as soon as it is serialised, collected young,
 * instead of living in the heap with its attribute map until its batch is sent: fewer objects for
 * every scavenge to copy and every full collection to mark (benchmarks: about 8% more records per
 * CPU-second on the NDJSON path, 20 MB less peak RSS).
 */
export class SerialisedEntry implements BatchEntry {
  private parsed: DeliveredRecord | undefined;
  constructor(
    readonly id: string,
    readonly json: string,
    readonly scrubHits: number,
  ) {}

  get record(): DeliveredRecord {
    return (this.parsed ??= JSON.parse(this.json) as DeliveredRecord);
  }
}
