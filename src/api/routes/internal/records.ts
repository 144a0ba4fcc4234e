/**
 * POST /internal/records (CONTRACT part 3): the embedded queue's only
 * entrance, and a convenience beside Kafka. Bearer key with the sensitive
 * `logs:ingest` scope; body NDJSON or a JSON array; each record is validated
 * and must belong to the key's organization. Answers
 * `202 {accepted, rejected: [{index, errors}]}`.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../errors.js';
import { decodeRecord, validateRecord } from '../../../source/record.js';
import type { Store } from '../../../store/store.js';
import { authenticate, scopesSatisfy } from '../../auth.js';
import { insufficientScope } from '../../errors.js';

export const INGEST_SCOPE = 'logs:ingest';
export const MAX_INGEST_RECORDS = 10_000;

/** Where accepted records go: the embedded queue, or a Kafka producer. */
export interface RecordSink {
  write(records: readonly { orgId: string; payload: string }[]): Promise<void>;
}

export function registerRecordRoutes(app: FastifyInstance, deps: { store: Store; sink: RecordSink }): void {
  app.addContentTypeParser('application/x-ndjson', { parseAs: 'string' }, (_req, body, done) => {
    const items: unknown[] = [];
    for (const line of (body as string).split('\n')) {
      if (line.trim() === '') continue;
      try {
        items.push(JSON.parse(line));
      } catch {
        items.push(INVALID_JSON);
      }
    }
    done(null, items);
  });

  app.post('/internal/records', { bodyLimit: 16 * 1024 * 1024 }, async (req, reply) => {
    const principal = await authenticate(req, deps.store);
    if (principal.scopes === null || !scopesSatisfy(principal.scopes, INGEST_SCOPE)) {
      throw insufficientScope('organization', principal.keyOrgId ?? principal.userId, INGEST_SCOPE);
    }
    const body = req.body;
    if (!Array.isArray(body)) {
      throw new AppError(400, 'VALIDATION_FAILED', 'body must be NDJSON (application/x-ndjson) or a JSON array of records');
    }
    if (body.length > MAX_INGEST_RECORDS) {
      throw new AppError(413, 'PAYLOAD_TOO_LARGE', `at most ${MAX_INGEST_RECORDS} records a request`, { field: 'records', max: MAX_INGEST_RECORDS });
    }
    const accepted: { orgId: string; payload: string }[] = [];
    const rejected: { index: number; errors: string[] }[] = [];
    body.forEach((item, index) => {
      if (item === INVALID_JSON) return void rejected.push({ index, errors: ['not valid JSON'] });
      // Validated before it is serialised: JSON.stringify recurses, and validation bounds the depth.
      const valid = validateRecord(item);
      if (!valid.ok) return void rejected.push({ index, errors: [valid.reason] });
      const payload = JSON.stringify(item);
      // The worker's own decoder on the text it will read: what it would dead-letter (too large,
      // holding NUL) is refused here instead of accepted.
      const v = decodeRecord(payload);
      if (!v.ok) return void rejected.push({ index, errors: [v.reason] });
      if (v.record.orgId !== principal.keyOrgId) {
        return void rejected.push({ index, errors: ["orgId is not the credential's organization"] });
      }
      accepted.push({ orgId: v.record.orgId, payload });
    });
    await deps.sink.write(accepted);
    return reply.status(202).send({ accepted: accepted.length, rejected });
  });
}

const INVALID_JSON = Symbol('invalid JSON line');
