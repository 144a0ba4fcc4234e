/**
 * Encoding apart from sending: an encoder turns one batch (one resource, its
 * records, a batch id) into the bytes of one request, before compression.
 * Each record's JSON is produced once, when it enters the batch; encoders
 * splice those strings rather than serialising the batch again.
 */
import type { Resource } from '../batch/resource.js';
import type { DeliveredRecord } from '../shape/delivered-record.js';

/** Named by `schemaUrl` and `X-Svc-Schema`: the delivered batch schema, major version 1.0. */
export const SCHEMA_URL = 'https://schemas.svc.dev/log-drain/batch/1.0.json';

export interface BatchEntry {
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

  get json(): string {
    return (this.text ??= JSON.stringify(this.record));
  }
}
