/**
 * Encoding apart from sending: an encoder turns one batch (one resource, its
 * records, a batch id) into the bytes of one request, before compression.
 * Each record's JSON is produced once, when it enters the batch; encoders
 * splice those strings rather than serialising the batch again.
 */
import type { Resource } from '../model/resource.js';
import type { DeliveredRecord } from '../shape/delivered-record.js';
import { writeRecordJson } from './record-json.js';
import type { Utf8Builder } from './utf8-builder.js';

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
  /** The JSON as UTF-8 bytes, where the entry holds it so (SerialisedEntry once settled): encoders copy it rather than encode `json`. */
  readonly utf8?: Buffer | undefined;
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
 *
 * A record shaped by the pipeline is written as UTF-8 bytes from the start (`written`); an entry
 * made from a JSON string (read back from the backlog) is settled into bytes once it waits in a
 * batch (`settle`). Either way its JSON is held in a slab shared by many entries rather than as a
 * string: a record waits about a second for its batch, through dozens of scavenges, and each one
 * copied the string's few hundred bytes (then promoted it, for a full collection to mark and
 * sweep). The entry keeps its slab and bounds, not a Buffer view of its own (an object more a
 * record for every scavenge to copy), and the slab's bytes are outside the heap. The encoders copy
 * the bytes into the body (`utf8`) instead of encoding the string there, so the encoding is moved,
 * not added. A slab lives as long as its longest-lived entry: a batch kept for retries keeps its
 * neighbours' bytes too, at most a slab an entry, and entries waiting in memory are bounded by
 * MAX_IN_FLIGHT_RECORDS.
 */
export class SerialisedEntry implements BatchEntry {
  private parsed: DeliveredRecord | undefined;
  private text: string | undefined;
  private slab: Buffer | undefined;
  private start = 0;
  private end = 0;
  constructor(
    readonly id: string,
    json: string,
    readonly scrubHits: number,
  ) {
    this.text = json;
  }

  get json(): string {
    return this.text ?? this.slab!.toString('utf8', this.start, this.end);
  }

  /** The JSON as UTF-8 (a view of its slab), once settled; undefined before. */
  get utf8(): Buffer | undefined {
    return this.slab?.subarray(this.start, this.end);
  }

  /**
   * Writes the JSON into `out` (its bytes once settled, else its text), the first byte replaced by
   * `first` when given: encoders splice an entry's JSON without a view of its slab made per entry.
   */
  writeJsonTo(out: Utf8Builder, first?: number): void {
    if (this.slab !== undefined) out.span(this.slab, this.start, this.end, first);
    else if (first === undefined) out.string(this.text!);
    else out.stringWithFirstByte(this.text!, first);
  }

  /** The bytes' length once settled, the string's before (jsonSizeHint). */
  get sizeHint(): number {
    return this.slab !== undefined ? this.end - this.start : this.text!.length;
  }

  /** UTF-8 length of the JSON. */
  get byteLength(): number {
    return this.slab !== undefined ? this.end - this.start : Buffer.byteLength(this.text!);
  }

  /**
   * The entry of a shaped record, its JSON written straight into a slab as UTF-8 (record-json.ts):
   * settled from the start, no string made. A record that does not fit the slab's room left, when
   * that is a quarter of a slab or more, or a fresh slab, gets bytes of its own.
   */
  static written(record: DeliveredRecord, scrubHits: number): SerialisedEntry {
    const entry = new SerialisedEntry(record.id, '', scrubHits);
    const room = SLAB_BYTES - slabUsed;
    let end = writeRecordJson(record, slab, slabUsed);
    if (end < 0 && room < SLAB_BYTES / 4) {
      freshSlab();
      end = writeRecordJson(record, slab, 0);
    }
    if (end < 0) entry.holdOwn(Buffer.from(JSON.stringify(record), 'utf8'));
    else {
      entry.hold(slab, slabUsed, end);
      slabUsed = end;
    }
    return entry;
  }

  /** Holds the JSON as UTF-8 bytes in a slab from now on (the entry waits in a batch); idempotent. */
  settle(): void {
    const text = this.text;
    if (text === undefined) return;
    // At most three bytes a UTF-16 unit: room for that, or a fresh slab (a long text gets its own).
    const most = text.length * 3;
    if (most > SLAB_BYTES - slabUsed) {
      if (most > SLAB_BYTES / 4) return this.holdOwn(Buffer.from(text, 'utf8'));
      freshSlab();
    }
    const start = slabUsed;
    slabUsed += slab.write(text, start, 'utf8');
    this.hold(slab, start, slabUsed);
  }

  private hold(bytes: Buffer, start: number, end: number): void {
    this.slab = bytes;
    this.start = start;
    this.end = end;
    this.text = undefined;
  }

  private holdOwn(bytes: Buffer): void {
    this.hold(bytes, 0, bytes.length);
  }

  get record(): DeliveredRecord {
    return (this.parsed ??= JSON.parse(this.json) as DeliveredRecord);
  }
}

/**
 * About the UTF-8 length of an entry's JSON, to size a body: a settled entry's bytes exactly, else
 * the string's length (exact for ASCII, which the builder's margin covers otherwise). Read without
 * making a view of a settled entry's bytes, which `utf8` does.
 */
export const jsonSizeHint = (e: BatchEntry): number => (e instanceof SerialisedEntry ? e.sizeHint : e.json.length);

/** Bytes of a slab of settled entries' JSON: a slab is freed once every entry written in it is. */
const SLAB_BYTES = 64 * 1024;
let slab = Buffer.allocUnsafe(SLAB_BYTES);
let slabUsed = 0;
function freshSlab(): void {
  slab = Buffer.allocUnsafe(SLAB_BYTES);
  slabUsed = 0;
}
