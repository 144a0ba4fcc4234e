import { SCHEMA_URL, type Encoder } from './encoder.js';
import { Utf8Builder } from './utf8-builder.js';

const SCHEMA_JSON = JSON.stringify(SCHEMA_URL);
const NEWLINE = Buffer.from('\n');

/**
 * Format `ndjson` (CONTRACT part 5): one record a line, each line carrying
 * `schemaUrl`, `batchId` and `resource` beside the record's own fields.
 */
export const ndjsonEncoder: Encoder = {
  contentType: 'application/x-ndjson',
  usesRecordJson: true,
  encode(batch) {
    const head = Buffer.from(`{"schemaUrl":${SCHEMA_JSON},"batchId":${JSON.stringify(batch.batchId)},"resource":${batch.resourceJson},`);
    let size = 0;
    for (const e of batch.entries) size += head.length + e.json.length;
    const out = new Utf8Builder(size);
    // Every record JSON starts with '{"id":', so the splice drops its opening brace.
    for (const e of batch.entries) {
      out.bytes(head);
      out.string(e.json, 1);
      out.bytes(NEWLINE);
    }
    return out.finish();
  },
};
