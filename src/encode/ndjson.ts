import { jsonSizeHint, SCHEMA_URL, SerialisedEntry, type Encoder } from './encoder.js';
import { Utf8Builder } from './utf8-builder.js';
import { recycleBodyBuffer } from './body-pool.js';

const SCHEMA_JSON = JSON.stringify(SCHEMA_URL);
const NEWLINE = 0x0a;
const COMMA = 0x2c;

/**
 * Format `ndjson` (CONTRACT part 5): one record a line, each line carrying
 * `schemaUrl`, `batchId` and `resource` beside the record's own fields.
 */
export const ndjsonEncoder: Encoder = {
  contentType: 'application/x-ndjson',
  usesRecordJson: true,
  // Each body is this call's alone (the batch id is in every line): its memory is reused.
  recycle: recycleBodyBuffer,
  encode(batch) {
    const head = Buffer.from(`{"schemaUrl":${SCHEMA_JSON},"batchId":${JSON.stringify(batch.batchId)},"resource":${batch.resourceJson}`);
    let size = 0;
    for (const e of batch.entries) size += head.length + jsonSizeHint(e) + 1;
    const out = new Utf8Builder(size, true);
    // Every record JSON starts with '{"id":': its opening brace becomes the comma after the head.
    for (const e of batch.entries) {
      out.bytes(head);
      if (e instanceof SerialisedEntry) e.writeJsonTo(out, COMMA);
      else out.stringWithFirstByte(e.json, COMMA);
      out.byte(NEWLINE);
    }
    return out.finish();
  },
};
