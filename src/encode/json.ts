import { jsonSizeHint, SCHEMA_URL, SerialisedEntry, type Encoder } from './encoder.js';
import { perContents, sharedPart, splicedBody } from './shared-encoding.js';
import { Utf8Builder } from './utf8-builder.js';

const SCHEMA_JSON = JSON.stringify(SCHEMA_URL);
const COMMA = 0x2c;

/**
 * The records text (`rec,rec,...`), made once per batch contents: drains
 * sending the same records share it and its compression (the batch id,
 * which differs per drain, is in the head only).
 */
const recordsPart = perContents((batch) => {
  let size = 0;
  for (const e of batch.entries) size += jsonSizeHint(e) + 1;
  const out = new Utf8Builder(size);
  for (let i = 0; i < batch.entries.length; i++) {
    if (i > 0) out.byte(COMMA);
    const e = batch.entries[i]!;
    if (e instanceof SerialisedEntry) e.writeJsonTo(out);
    else out.string(e.json);
  }
  return sharedPart(out.finish());
});

/** Format `json`: the batch of spec 01 part 2.3 as one JSON document. */
export const jsonEncoder: Encoder = {
  contentType: 'application/json',
  usesRecordJson: true,
  encode(batch) {
    const head = `{"schemaUrl":${SCHEMA_JSON},"batchId":${JSON.stringify(batch.batchId)},"resource":${batch.resourceJson},"records":[`;
    return splicedBody(head, recordsPart(batch), ']}');
  },
};
