/**
 * Route schemas of the log read family (spec 01 parts 2.5 and 4.3): the
 * query parameters in the words the API answers with, enforced before the
 * handler, and the answers, serialised through them. What a parameter's
 * shape cannot say (a calendar date that exists, bounds in order, a cursor
 * this route wrote) is log-query.ts's.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ENVIRONMENTS, SEVERITIES } from '../../model/drain.js';
import { RULE } from '../../api/kernel/schema.js';
import { CursorParam, errorResponses, LimitParam, Nullable } from '../../api/kernel/schema-types.js';
import { SKILL_ID_MAX } from './pages.js';

/** How many entries a log read returns by default, and at most. */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/**
 * Page numbers reach at most this many entries deep: an offset scan costs
 * what it skips, so deeper reads go through `cursor`, which costs nothing extra.
 */
export const MAX_PAGE_OFFSET = 100_000;

/** ISO 8601 (a date, or a date-time with a zone) or relative to now: the forms, not yet the calendar. */
const INSTANT = '^(\\d{1,7}[smhdw]|\\d{4}-\\d{2}-\\d{2}|\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:?\\d{2}))$';
const instant = (name: 'since' | 'until', description: string) =>
  Type.String({ pattern: INSTANT, description, [RULE]: `${name} must be an ISO 8601 date or date-time with a zone, or relative such as 15m, 2h, 7d` });

const selection = {
  logSource: Type.Optional(Type.String({
    pattern: '^(all|[a-z_-]{1,64})$',
    description: 'A log source (skill, mcp, execution, ...) or all',
    [RULE]: 'logSource must be a log source (lowercase letters, _ or -) or all',
  })),
  since: Type.Optional(instant('since', 'Inclusive; ISO 8601 (date-time with zone, or date) or relative: 15m, 2h, 7d (s, m, h, d, w)')),
  until: Type.Optional(instant('until', 'Inclusive; same forms as since')),
  environment: Type.Optional(Type.String({ enum: [...ENVIRONMENTS], [RULE]: 'environment must be production or sandbox' })),
  cursor: Type.Optional(Type.String({ ...CursorParam, description: 'A previous nextCursor; cannot be combined with page' })),
};

export const ListQuery = Type.Object({
  ...selection,
  limit: LimitParam({ fallback: DEFAULT_LIMIT, max: MAX_LIMIT, clamp: true }),
  page: Type.Optional(Type.String({ pattern: '^(?!0+$)\\d{1,9}$', deprecated: true, description: 'Deprecated: use cursor. From 1', [RULE]: 'page must be an integer from 1' })),
});
export const DownloadQuery = Type.Object(selection);
export type ListQuery = Static<typeof ListQuery>;
export type DownloadQuery = Static<typeof DownloadQuery>;

/** One log entry: every field always present, optional ones null (attributes `{}`). */
export const LogEntry = Type.Object(
  {
    id: Type.String(),
    timestamp: Type.String({ format: 'date-time', description: 'RFC 3339 in UTC, millisecond precision' }),
    orgId: Type.String(),
    agentId: Type.String(),
    agentName: Type.String(),
    agentVersion: Nullable(Type.String()),
    environment: Type.String({ description: [...ENVIRONMENTS].join(' or ') }),
    source: Type.String(),
    eventName: Type.String({ description: 'svc.<source>.<event>, the name drains deliver' }),
    severity: Type.String({ description: [...SEVERITIES].join(', ') }),
    severityNumber: Type.Integer(),
    message: Nullable(Type.String()),
    executionId: Type.String(),
    traceId: Nullable(Type.String()),
    spanId: Nullable(Type.String()),
    attributes: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);
export type LogEntry = Static<typeof LogEntry>;

const Pagination = Type.Object(
  {
    currentPage: Nullable(Type.Integer({ description: 'null when reading by cursor' })),
    totalPages: Type.Integer(),
    totalCount: Type.Integer({ maximum: 10_000, description: 'counting stops past 10,000' }),
    limit: Type.Integer(),
    hasNextPage: Type.Boolean(),
    hasPrevPage: Type.Boolean(),
    nextPage: Nullable(Type.Integer()),
    prevPage: Nullable(Type.Integer()),
    totalCountExact: Type.Boolean(),
  },
  { additionalProperties: false, description: 'Kept for one release beside nextCursor' },
);
export type Pagination = Static<typeof Pagination>;

export const LogList = Type.Object(
  { logs: Type.Array(LogEntry), nextCursor: Nullable(Type.String()), pagination: Pagination },
  { additionalProperties: false, description: 'Spec 01 part 2.5' },
);
export type LogList = Static<typeof LogList>;

const errors = errorResponses(400, 401, 403, 429);
const tags = ['logs'];
const AgentParams = Type.Object({ agentId: Type.String() });
const SkillParams = Type.Object({
  agentId: Type.String(),
  // At most 100 characters: the router answers 414 to a longer path parameter, before any schema.
  skillId: Type.String({ minLength: 1, maxLength: SKILL_ID_MAX, description: "Matched against the records' attributes.skillId", [RULE]: `skillId must be a string of 1-${SKILL_ID_MAX} characters` }),
});
const OrgParams = Type.Object({ orgId: Type.String() });

export const schemas = {
  agentLogs: {
    tags, summary: "One agent's logs, newest first (scope logs:read; knowledge:read deprecated)",
    params: AgentParams, querystring: ListQuery, response: { 200: LogList, ...errors },
  },
  skillLogs: {
    tags, summary: "One skill's logs on an agent (source skill, attributes.skillId), newest first (scope logs:read; automations:read deprecated)",
    params: SkillParams, querystring: ListQuery, response: { 200: LogList, ...errors },
  },
  orgLogs: {
    tags, summary: 'Logs of every agent of the organization, newest first (scope logs:read; analytics:read deprecated)',
    params: OrgParams, querystring: ListQuery, response: { 200: LogList, ...errors },
  },
  orgDownload: {
    tags, summary: 'The same selection as NDJSON, one entry a line, newest first, streamed (scope logs:read; analytics:read deprecated)',
    params: OrgParams, querystring: DownloadQuery,
    produces: ['application/x-ndjson'],
    response: { 200: Type.String({ description: 'application/x-ndjson: one log entry (as in logs[]) per line' }), ...errors },
  },
};
