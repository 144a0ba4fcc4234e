import { SCHEMA_URL, type Encoder } from './encoder.js';

const SCHEMA_JSON = JSON.stringify(SCHEMA_URL);

/** Format `json`: the batch of spec 01 part 2.3 as one JSON document. */
export const jsonEncoder: Encoder = {
  contentType: 'application/json',
  encode(batch) {
    let out = `{"schemaUrl":${SCHEMA_JSON},"batchId":${JSON.stringify(batch.batchId)},"resource":${batch.resourceJson},"records":[`;
    for (let i = 0; i < batch.entries.length; i++) out += (i === 0 ? '' : ',') + batch.entries[i]!.json;
    return Buffer.from(out + ']}', 'utf8');
  },
};
