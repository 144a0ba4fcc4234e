/**
 * POST /internal/records (CONTRACT part 3): the embedded queue's only
 * entrance, and a convenience beside Kafka. Bearer key with the sensitive
 * `logs:ingest` scope; body NDJSON or a JSON array; each record is validated
 * and must belong to the key's organization. Answers
 * `202 {accepted, rejected: [{index, errors}]}`.
 *
 * The credential is checked when the request arrives, before a byte of the
 * body is read: an unauthenticated body costs nothing but its headers. The
 * body is then split record by record (record-body.ts), so neither its size
 * in records nor its depth is paid for before it is refused.
 */
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KernelStore } from '../../store/kernel.js';
import type { RecordSink } from '../../source/sink.js';
import { grantedOf } from '../../api/kernel/access.js';
import { errorResponses } from '../../api/kernel/schema-types.js';
import { Type, type Static } from '@sinclair/typebox';
import { defineScopes } from '../../api/kernel/scopes.js';
import { bodyChunks } from './body-chunks.js';
import type { Checked } from './check-record.js';
import { createBodyReader, type BodyKind, type ReadBody } from './body-reader.js';
import { requireUtf8Charset } from '../../api/kernel/charset.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';

export const INGEST_SCOPE = 'logs:ingest';

defineScopes('ingest', {
  [INGEST_SCOPE]: { sensitive: true, description: 'POST /internal/records (CONTRACT part 3), by a typed API key only' },
});
export const MAX_INGEST_RECORDS = 10_000;
export const MAX_INGEST_BODY_BYTES = 16 * 1024 * 1024;


/** Where each record's rules live: the agent record's schema, checked record by record. */
const RECORD_SCHEMA = 'schemas/agent-record.schema.json';

const IngestBody = Type.Array(
  Type.Object({}, { additionalProperties: true, description: `An agent record (${RECORD_SCHEMA}) of the key's organization` }),
  {
    maxItems: MAX_INGEST_RECORDS,
    description: `A JSON array of records, or NDJSON (application/x-ndjson): one record a line. At most ${MAX_INGEST_RECORDS} records and ${MAX_INGEST_BODY_BYTES} bytes.`,
  },
);

const IngestAnswer = Type.Object(
  {
    accepted: Type.Integer(),
    rejected: Type.Array(
      Type.Object({ index: Type.Integer({ description: "the record's place in the body, from 0" }), errors: Type.Array(Type.String()) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
type IngestAnswer = Static<typeof IngestAnswer>;

const INGEST_SCHEMA = {
  tags: ['ingest'],
  summary: 'Accept agent execution records (the embedded queue, or the Kafka topic when configured)',
  description: `Each record follows ${RECORD_SCHEMA} and belongs to the key's organization; the others are listed in rejected with their index, and the rest accepted.`,
  consumes: ['application/x-ndjson', 'application/json'],
  body: IngestBody,
  response: { 202: IngestAnswer, ...errorResponses(400, 401, 403, 413, 415) },
};

/**
 * What the content-type parsers hand the route: each record's refusal or payload, checked in the step
 * that parsed it. The parsed values are not kept: held until the body's end, four 15 MB bodies' worth
 * of them outlived the young generation and grew the old one (docs/benchmarks-api.md, "Ingest isolation
 * benchmark").
 */
class SplitBody {
  constructor(readonly items: ReadBody) {}
}

export interface IngestDeps {
  store: Pick<KernelStore, 'auth'>;
  /** Where accepted records go (src/source/sink.ts). */
  sink: RecordSink;
}

export function registerRecordRoutes(scope: FastifyInstance, deps: IngestDeps): void {
  // The family's own context (registerFamily): its parsers, which split rather than parse, serve this route only.
  scope.removeContentTypeParser('application/json');
  // The request's stream, not a buffer: the body is read, checked for UTF-8 (and in no other charset,
  // kernel/json-body.ts) and split a chunk at a time as it arrives, never joined or decoded whole
  // (record-body.ts), in slices between which the event loop turns, or on a reader thread of its
  // own when it is large (body-reader.ts).
  // The credential was checked when the request arrived (before the body is read), so each record
  // is checked against its organization as soon as it is parsed.
  const reader = createBodyReader();
  scope.addHook('onClose', () => reader.close());
  const reading = (kind: BodyKind) =>
    async (req: FastifyRequest, payload: Readable): Promise<SplitBody> => {
      requireUtf8Charset(req.headers['content-type']);
      const { keyOrgId } = grantedOf(req).principal;
      const length = req.headers['content-length'];
      const chunks = bodyChunks(payload, length, req.routeOptions.bodyLimit ?? MAX_INGEST_BODY_BYTES);
      try {
        const declared = length ? Number(length) : undefined;
        return new SplitBody(await reader.read(kind, chunks, keyOrgId, MAX_INGEST_RECORDS, Number.isFinite(declared) ? declared : undefined));
      } finally {
        chunks.release();
      }
    };
  scope.addContentTypeParser('application/json', reading('json'));
  scope.addContentTypeParser('application/x-ndjson', reading('ndjson'));

  scope.post('/internal/records', {
    bodyLimit: MAX_INGEST_BODY_BYTES,
    // The kernel checks the credential when the request arrives, before fastify reads the body:
    // a request without the scope is refused unread.
    config: {
      access: { resource: 'key-org', scope: { required: INGEST_SCOPE } },
      mediaTypes: ['application/x-ndjson', 'application/json'],
      // A body is accepted in part: each record is checked on its own and a refusal names its index,
      // where a schema would refuse the body whole (and have it parsed whole first).
      bodyUnchecked: `split by its own parser and checked record by record against ${RECORD_SCHEMA}`,
      // A record holding NUL or half a surrogate pair is refused alone, with its index, like any other.
      ownTextRule: 'each record is checked for text the store cannot hold and refused alone',
    },
    schema: INGEST_SCHEMA,
  }, async (req, reply) => {
    const { principal } = grantedOf(req);
    const split = req.body instanceof SplitBody ? req.body.items : undefined;
    if (split === undefined || !Array.isArray(split)) {
      throw KernelErrors.VALIDATION_FAILED('body must be NDJSON (application/x-ndjson) or a JSON array of records');
    }
    const accepted: (Checked & { index: number })[] = [];
    const rejected: IngestAnswer['rejected'] = [];
    // Each record was checked as it was parsed (in the parser's slices): what is left is sorting them.
    for (let index = 0; index < split.length; index++) {
      const checked = split[index]!;
      if (typeof checked === 'string') rejected.push({ index, errors: [checked] });
      else accepted.push({ ...checked, index });
    }
    // An agent the store knows belongs to its organization: a record naming another organization's
    // agent would show in that agent's log reads. Agents the store does not know are accepted: the
    // store holds the agents it was seeded with, not every agent a platform runs.
    const foreign = new Set(await deps.store.auth.agentsOfOtherOrgs(principal.keyOrgId ?? '', [...new Set(accepted.map((a) => a.agentId))]));
    const kept = foreign.size === 0 ? accepted : accepted.filter((a) => {
      if (!foreign.has(a.agentId)) return true;
      rejected.push({ index: a.index, errors: ["agentId is an agent of another organization"] });
      return false;
    });
    rejected.sort((a, b) => a.index - b.index);
    await deps.sink.write(kept.map((a) => ({ orgId: a.orgId, payload: a.payload })));
    return reply.status(202).send({ accepted: kept.length, rejected });
  });
}
