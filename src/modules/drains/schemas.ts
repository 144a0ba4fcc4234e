/**
 * Route schemas of the drain family, for the OpenAPI document served at
 * /docs/openapi.json. Requests are validated by validate.ts (which answers
 * the spec's codes per rule); these schemas describe the same shapes.
 */
const orgParams = { type: 'object', required: ['orgId'], properties: { orgId: { type: 'string' } } } as const;
const drainParams = {
  type: 'object',
  required: ['orgId', 'drainId'],
  properties: { orgId: { type: 'string' }, drainId: { type: 'string' } },
} as const;

const header = { type: 'object', required: ['name', 'value'], properties: { name: { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$' }, value: { type: 'string' } } } as const;
const scrubRule = { type: 'object', required: ['id', 'pattern'], properties: { id: { type: 'string' }, pattern: { type: 'string', maxLength: 256 }, flags: { type: 'string' } } } as const;

const drainFields = {
  name: { type: 'string', minLength: 1, maxLength: 64 },
  endpoint: { type: 'string', format: 'uri', description: 'https only; never a private, loopback, link-local or metadata address' },
  site: { type: 'string', enum: ['us1', 'us3', 'us5', 'eu1', 'ap1', 'gov'], description: 'vendor-a only' },
  format: { type: 'string', enum: ['json', 'ndjson'] },
  headers: { type: 'array', maxItems: 10, items: header },
  secret: { type: 'string', description: 'http only; generated when omitted on create' },
  sources: { type: 'array', items: { type: 'string' } },
  minSeverity: { type: 'string', enum: ['debug', 'info', 'warn', 'error'] },
  agents: { oneOf: [{ type: 'string', const: '*' }, { type: 'array', items: { type: 'string' } }] },
  environments: { type: 'array', items: { type: 'string', enum: ['production', 'sandbox'] } },
  sampling: { type: ['object', 'null'], properties: { debug: { type: 'number', exclusiveMinimum: 0, maximum: 1 } } },
  includeContent: { type: 'boolean' },
  includeContentAck: { type: 'boolean' },
  redact: { type: ['array', 'null'], maxItems: 32, items: { type: 'string' } },
  scrubRules: { type: ['array', 'null'], maxItems: 20, items: scrubRule },
} as const;

const error = { type: 'object', description: 'Error (spec 01 part 7.1)', properties: { statusCode: { type: 'integer' }, error: { type: 'string' }, code: { type: 'string' }, message: {} } } as const;
const drain = { type: 'object', description: 'LogDrainRead (spec 01 part 2.1)', additionalProperties: true } as const;
const errors = { 400: error, 401: error, 403: error, 404: error, 409: error, 422: error, 429: error } as const;

export const schemas = {
  list: { tags: ['log-drains'], summary: 'List the drains of an organization', params: orgParams, response: { 200: { type: 'object', properties: { drains: { type: 'array', items: drain }, limits: { type: 'object', properties: { maxDrains: { type: 'integer' } } } } }, ...errors } },
  create: {
    tags: ['log-drains'], summary: 'Create a drain (pending_verification); the only answer carrying the secret', params: orgParams,
    body: { type: 'object', required: ['name', 'type'], properties: { ...drainFields, type: { type: 'string', enum: ['http', 'otlp', 'vendor-a', 'vendor-b'] } }, additionalProperties: false },
    response: { 201: drain, ...errors },
  },
  get: { tags: ['log-drains'], summary: 'Read a drain', params: drainParams, response: { 200: drain, ...errors } },
  patch: { tags: ['log-drains'], summary: 'Update a drain (any create field but type; null clears sampling, redact, scrubRules)', params: drainParams, body: { type: 'object', properties: drainFields, additionalProperties: false }, response: { 200: drain, ...errors } },
  remove: { tags: ['log-drains'], summary: 'Soft-delete a drain', params: drainParams, response: { 204: { type: 'null', description: 'Deleted' }, ...errors } },
  verify: { tags: ['log-drains'], summary: 'Start ownership verification', params: drainParams, response: { 202: { type: 'object', properties: { verificationId: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' } } }, ...errors } },
  test: { tags: ['log-drains'], summary: 'Send one svc.drain.test record through the delivery path', params: drainParams, response: { 202: { type: 'object', properties: { batchId: { type: 'string' }, enqueuedAt: { type: 'string', format: 'date-time' } } }, ...errors } },
  pause: { tags: ['log-drains'], summary: 'Pause a drain', params: drainParams, body: { type: ['object', 'null'], properties: { reason: { type: 'string', maxLength: 256 } } }, response: { 200: drain, ...errors } },
  resume: { tags: ['log-drains'], summary: 'Resume a paused drain (to degraded)', params: drainParams, response: { 200: drain, ...errors } },
  rotate: {
    tags: ['log-drains'], summary: 'Rotate the signing secret (24-hour window) or finalize the open window', params: drainParams,
    querystring: { type: 'object', properties: { finalize: { type: 'boolean', default: false } } },
    response: { 200: { type: 'object', description: 'Without finalize: {secret, rotation: {startedAt, expiresAt}}; with finalize=true: the drain', additionalProperties: true }, ...errors },
  },
  deliveries: {
    tags: ['log-drains'], summary: 'Delivery attempts of the last seven days, newest first', params: drainParams,
    querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, cursor: { type: 'string' }, kind: { type: 'string', enum: ['batch', 'test', 'verify', 'heartbeat', 'dropped', 'truncated'] } } },
    response: { 200: { type: 'object', properties: { deliveries: { type: 'array', items: { type: 'object', additionalProperties: true } }, nextCursor: { type: ['string', 'null'] } } }, ...errors },
  },
  audit: {
    tags: ['log-drains'], summary: 'Audit entries of the organization\'s drains, newest first', params: orgParams,
    querystring: { type: 'object', properties: { drainId: { type: 'string' }, action: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, cursor: { type: 'string' } } },
    response: { 200: { type: 'object', properties: { entries: { type: 'array', items: { type: 'object', additionalProperties: true } }, nextCursor: { type: ['string', 'null'] } } }, ...errors },
  },
};
