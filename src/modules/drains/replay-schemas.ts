/**
 * The replay routes' schemas: the request body (a window in the log reads' instant forms), the
 * list query, the replay path and the replay's read form.
 */
import { Type, type Static } from '@sinclair/typebox';
import { RULE } from '../../api/kernel/schema.js';
import { CursorParam, errorResponses, LimitParam, Nullable } from '../../api/kernel/schema-types.js';
import { INSTANT_FORMS } from '../../api/kernel/instant.js';
import { REPLAY_STATUSES } from './tables/replays.js';

/** The log reads' forms (ISO 8601 date or date-time with a zone, or relative to now); instantOf checks the calendar. */
const INSTANT = '^(\\d{1,7}[smhdw]|\\d{4}-\\d{2}-\\d{2}|\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:?\\d{2}))$';
const instant = (name: 'since' | 'until', description: string) =>
  Type.String({ pattern: INSTANT, maxLength: 64, description, [RULE]: { null: `${name} must not be null`, '*': `${name} ${INSTANT_FORMS}` } });

export const REPLAY_BODY = 'body must be a JSON object {since, until}';

export const ReplayBody = Type.Object(
  {
    since: instant('since', 'Inclusive; ISO 8601 (date-time with zone, or date) or relative: 15m, 2h, 7d (s, m, h, d, w); within the platform copy\'s retention'),
    until: instant('until', 'Inclusive; the same forms; a time after now is taken as now; at most 7 days after since'),
  },
  { additionalProperties: false, [RULE]: { type: REPLAY_BODY, additionalProperties: '{path} is not a replay field', required: '{path} is required' } },
);
export type ReplayBody = Static<typeof ReplayBody>;

export const ReplayParams = Type.Object({ orgId: Type.String(), drainId: Type.String(), replayId: Type.String() });
export type ReplayParams = Static<typeof ReplayParams>;

export const ReplaysQuery = Type.Object({
  limit: LimitParam({ fallback: 20, max: 100 }),
  cursor: Type.Optional(CursorParam),
});
export type ReplaysQuery = Static<typeof ReplaysQuery>;

const Instant = Type.String({ format: 'date-time' });

export const ReplayRead = Type.Object(
  {
    id: Type.String(),
    orgId: Type.String(),
    drainId: Type.String(),
    since: Instant,
    until: Instant,
    status: Type.String({ enum: [...REPLAY_STATUSES] }),
    progress: Type.Object(
      {
        recordsTotal: Nullable(Type.Integer({ description: 'records of the window in the platform copy, counted when a worker first takes the replay' })),
        recordsRead: Type.Integer({ description: 'records of the window read so far' }),
        recordsSent: Type.Integer({ description: 'records delivered: those the drain selects, samples in and its quota admits now' }),
        batchesSent: Type.Integer(),
        position: Nullable(Type.Object(
          { ts: Type.String({ description: 'the time of the last record read (microseconds)' }), recordId: Type.String() },
          { additionalProperties: false, description: 'where the replay resumes: after this record, in (ts, id) order' },
        )),
      },
      { additionalProperties: false },
    ),
    error: Nullable(Type.String({ description: 'failed: why' })),
    requestedBy: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
    createdAt: Instant,
    updatedAt: Instant,
    endedAt: Nullable(Instant),
  },
  { additionalProperties: false },
);
export type ReplayRead = Static<typeof ReplayRead>;

const errors = errorResponses(400, 401, 403, 404, 409, 422, 429);
const tags = ['log-drains'];
const DrainParams = Type.Object({ orgId: Type.String(), drainId: Type.String() });

export const replaySchemas = {
  create: {
    tags, summary: 'Replay a time window of the platform copy through the drain as it is configured now', params: DrainParams,
    body: ReplayBody, response: { 202: ReplayRead, ...errors },
  },
  list: {
    tags, summary: 'The drain\'s replays, newest first', params: DrainParams, querystring: ReplaysQuery,
    response: { 200: Type.Object({ replays: Type.Array(ReplayRead), nextCursor: Nullable(Type.String()) }, { additionalProperties: false }), ...errors },
  },
  get: { tags, summary: 'A replay and its progress', params: ReplayParams, response: { 200: ReplayRead, ...errors } },
  cancel: { tags, summary: 'Cancel a replay not ended (the worker stops before its next batch)', params: ReplayParams, response: { 200: ReplayRead, ...errors } },
};
