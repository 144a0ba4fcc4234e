/**
 * Route schemas of the log read family, for the OpenAPI document. The
 * requests are validated by log-query.ts; these schemas describe the same.
 */
const selection = {
  logSource: { type: 'string', description: 'A log source (skill, mcp, execution, ...) or all' },
  since: { type: 'string', description: 'Inclusive; ISO 8601 (date-time with zone, or date) or relative: 15m, 2h, 7d (s, m, h, d, w)' },
  until: { type: 'string', description: 'Inclusive; same forms as since' },
  environment: { type: 'string', enum: ['production', 'sandbox'] },
  cursor: { type: 'string', description: 'A previous nextCursor; cannot be combined with page' },
} as const;
const listQuery = {
  type: 'object',
  properties: {
    ...selection,
    limit: { type: 'integer', minimum: 1, default: 20, description: 'Clamped to 100' },
    page: { type: 'integer', minimum: 1, default: 1, deprecated: true, description: 'Deprecated: use cursor' },
  },
} as const;

const entry = {
  type: 'object',
  properties: {
    id: { type: 'string' }, timestamp: { type: 'string', format: 'date-time' }, orgId: { type: 'string' }, agentId: { type: 'string' },
    agentName: { type: 'string' }, agentVersion: { type: ['string', 'null'] }, environment: { type: 'string', enum: ['production', 'sandbox'] },
    source: { type: 'string' }, eventName: { type: 'string' }, severity: { type: 'string', enum: ['debug', 'info', 'warn', 'error'] },
    severityNumber: { type: 'integer' }, message: { type: ['string', 'null'] }, executionId: { type: 'string' },
    traceId: { type: ['string', 'null'] }, spanId: { type: ['string', 'null'] }, attributes: { type: 'object', additionalProperties: true },
  },
} as const;
const nullableInt = { type: ['integer', 'null'] } as const;
const listResult = {
  type: 'object',
  description: 'Spec 01 part 2.5',
  properties: {
    logs: { type: 'array', items: entry },
    nextCursor: { type: ['string', 'null'] },
    pagination: {
      type: 'object',
      properties: {
        currentPage: nullableInt, totalPages: { type: 'integer' }, totalCount: { type: 'integer', maximum: 10000 }, limit: { type: 'integer' },
        hasNextPage: { type: 'boolean' }, hasPrevPage: { type: 'boolean' }, nextPage: nullableInt, prevPage: nullableInt,
        totalCountExact: { type: 'boolean' },
      },
    },
  },
} as const;
const error = { type: 'object', properties: { statusCode: { type: 'integer' }, error: { type: 'string' }, code: { type: 'string' }, message: {} } } as const;
const errors = { 400: error, 401: error, 403: error, 429: error } as const;

export const schemas = {
  agentLogs: {
    tags: ['logs'], summary: "One agent's logs, newest first (scope logs:read; knowledge:read deprecated)",
    params: { type: 'object', required: ['agentId'], properties: { agentId: { type: 'string' } } },
    querystring: listQuery, response: { 200: listResult, ...errors },
  },
  orgLogs: {
    tags: ['logs'], summary: 'Logs of every agent of the organization, newest first (scope logs:read; analytics:read deprecated)',
    params: { type: 'object', required: ['orgId'], properties: { orgId: { type: 'string' } } },
    querystring: listQuery, response: { 200: listResult, ...errors },
  },
  orgDownload: {
    tags: ['logs'], summary: 'The same selection as NDJSON, one entry a line, newest first, streamed (scope logs:read; analytics:read deprecated)',
    params: { type: 'object', required: ['orgId'], properties: { orgId: { type: 'string' } } },
    querystring: { type: 'object', properties: selection },
    produces: ['application/x-ndjson'],
    response: { 200: { description: 'application/x-ndjson: one log entry (as in logs[]) per line', type: 'string' }, ...errors },
  },
};
