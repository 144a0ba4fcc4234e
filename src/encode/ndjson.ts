import { SCHEMA_URL, type Encoder } from './encoder.js';

const SCHEMA_JSON = JSON.stringify(SCHEMA_URL);

/**
 * Format `ndjson` (CONTRACT part 5): one record a line, each line carrying
 * `schemaUrl`, `batchId` and `resource` beside the record's own fields.
 */
export const ndjsonEncoder: Encoder = {
  contentType: 'application/x-ndjson',
  encode(batch) {
    const head = `{"schemaUrl":${SCHEMA_JSON},"batchId":${JSON.stringify(batch.batchId)},"resource":${batch.resourceJson},`;
    let out = '';
    // Every record JSON starts with '{"id":', so the splice drops its opening brace.
    for (const e of batch.entries) out += head + e.json.slice(1) + '\n';
    return Buffer.from(out, 'utf8');
  },
};
