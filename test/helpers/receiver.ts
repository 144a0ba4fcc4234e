/** The self-signed HTTPS receiver on loopback, with test-side checks of what arrived. */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../../src/devtools/https-receiver.js';

export const CERT_DIR = join(tmpdir(), 'logdrain-test-certs');

export const startReceiver = (): Promise<HttpsReceiver> => startHttpsReceiver({ certDir: CERT_DIR });

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const batchSchemaPath = new URL('../../schemas/batch-1.0.schema.json', import.meta.url);
export const validateBatch = ajv.compile(JSON.parse(readFileSync(batchSchemaPath, 'utf8')));
const recordSchemaPath = new URL('../../schemas/agent-record.schema.json', import.meta.url);
export const validateSourceRecord = ajv.compile(JSON.parse(readFileSync(recordSchemaPath, 'utf8')));

export interface DeliveredBatch {
  schemaUrl: string;
  batchId: string;
  resource: Record<string, string>;
  records: { id: string; [k: string]: unknown }[];
}

/** Parses a received json or ndjson batch into the json form, checking ndjson lines agree. */
export function parseBatch(r: ReceivedRequest): DeliveredBatch {
  const text = r.body.toString('utf8');
  if (r.headers['content-type'] === 'application/x-ndjson') {
    const lines = text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>);
    const first = lines[0]!;
    const records = lines.map(({ schemaUrl: _s, batchId: _b, resource: _r, ...rec }) => rec as DeliveredBatch['records'][number]);
    for (const l of lines) {
      if (l.batchId !== first.batchId || JSON.stringify(l.resource) !== JSON.stringify(first.resource)) {
        throw new Error('ndjson lines of one batch disagree on batchId or resource');
      }
    }
    return { schemaUrl: first.schemaUrl as string, batchId: first.batchId as string, resource: first.resource as Record<string, string>, records };
  }
  return JSON.parse(text) as DeliveredBatch;
}

/** Verifies a delivery's signature with the standardwebhooks package (throws when it does not verify). */
export function verifySignature(r: ReceivedRequest, secret: string): void {
  const headers: Record<string, string> = {};
  for (const k of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) headers[k] = String(r.headers[k]);
  try {
    new Webhook(secret).verify(r.body.toString('utf8'), headers);
  } catch (e) {
    // The package JSON-parses the payload after the signature checks out; an NDJSON body fails only that step.
    if (e instanceof SyntaxError && r.headers['content-type'] === 'application/x-ndjson') return;
    throw e;
  }
}

export type { HttpsReceiver };
