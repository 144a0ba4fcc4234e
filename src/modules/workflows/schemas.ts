/** The workflow routes' schemas (spec 03 part 4.3; contract W4-W6): the kernel enforces them, their `x-rule`s are the answers' words. */
import { Type, type Static } from '@sinclair/typebox';
import { CursorParam, LimitParam } from '../../api/kernel/schema-types.js';
import { RULE } from '../../api/kernel/schema.js';

/** One of `values`, refused in the words of `rule`. */
const Enum = <const T extends readonly string[]>(values: T, rule: string) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], [RULE]: rule });

const ID_RULE = '{path} must be 1-128 letters, digits, _ or -';
const Id = Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', [RULE]: ID_RULE });

export const AgentParams = Type.Object({ agentId: Type.String() });
export const RunParams = Type.Object({ agentId: Type.String(), runId: Type.String({ maxLength: 128, [RULE]: 'runId must be at most 128 characters' }) });

/** An error in the workflow shape `{statusCode, message, code, ...detail}` (spec 03 part 7). */
export const WorkflowError = Type.Object(
  { statusCode: Type.Integer(), message: Type.String(), code: Type.Optional(Type.String()) },
  { additionalProperties: true, description: 'Error (spec 03 part 7): validation failures carry details[] {path, constraint, message}' },
);
export const errorResponses = Object.fromEntries([400, 401, 403, 404, 409, 413, 429].map((s) => [s, WorkflowError]));

const Open = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const DefinitionsQuery = Type.Object({
  form: Type.Optional(Enum(['graph', 'script'], 'form must be graph or script')),
  includeComposed: Type.Optional(Enum(['true', 'false'], 'includeComposed must be true or false')),
  cursor: Type.Optional(CursorParam),
  limit: Type.Optional(LimitParam({ fallback: 50, max: 100 })),
}, { additionalProperties: false });
export type DefinitionsQueryT = Static<typeof DefinitionsQuery>;
export const DefinitionsPage = Type.Object({ items: Type.Array(Open('a definition list item (spec 03 part 2.4)')), nextCursor: Type.Union([Type.String(), Type.Null()]) });

const Digits = (name: string) => Type.String({ pattern: '^\\d{1,15}$', [RULE]: `${name} must be a whole number` });
export const TRIGGERS = ['chat', 'sdk', 'api', 'schedule', 'webhook', 'template', 'workflow', 'device'] as const;
export const SORTS = ['-createdAt', 'createdAt', '-durationMs', 'durationMs'] as const;

export const RunsQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 200, [RULE]: 'status must be a comma-separated list of run statuses' })),
  workflowId: Type.Optional(Id),
  trigger: Type.Optional(Enum(TRIGGERS, `trigger must be one of ${TRIGGERS.join(', ')}`)),
  updatedSince: Type.Optional(Digits('updatedSince')),
  batchId: Type.Optional(Id),
  correlationKey: Type.Optional(Type.String()),
  tag: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 40, [RULE]: 'each tag must be 1 to 40 characters' }), { maxItems: 10, [RULE]: { maxItems: 'tag may be given at most 10 times', '*': 'each tag must be 1 to 40 characters' } })),
  minDurationMs: Type.Optional(Digits('minDurationMs')),
  maxDurationMs: Type.Optional(Digits('maxDurationMs')),
  sort: Type.Optional(Enum(SORTS, `sort must be one of ${SORTS.join(', ')}`)),
  cursor: Type.Optional(Type.String()),
  limit: Type.Optional(LimitParam({ fallback: 50, max: 100 })),
}, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a filter of this route' } });
export type RunsQueryT = Static<typeof RunsQuery>;
export const RunsPage = Type.Object({ items: Type.Array(Open('a run summary (spec 03 part 2.4)')), nextCursor: Type.Union([Type.String(), Type.Null()]) });

export const DetailQuery = Type.Object({
  fields: Type.Optional(Enum(['summary', 'full'], 'fields must be summary or full')),
}, { additionalProperties: false });
export type DetailQueryT = Static<typeof DetailQuery>;

const CORRELATION = '^[A-Za-z0-9:_./-]{1,128}$';
/** 1-256 characters, none of them a control character (C0, DEL, C1). */
const ORIGIN_THREAD = '^[^\\u0000-\\u001F\\u007F-\\u009F]{1,256}$';
export const ORIGIN_THREAD_RULE = 'originThreadId must be 1 to 256 characters without control characters';
export const NOTIFY_MODES = ['emailApp', 'email', 'app', 'off'] as const;
export const NOTIFY_CHANNELS = ['chatapp', 'sms', 'email', 'webchat', 'teamchat'] as const;
export const StartBodySchema = Type.Object({
  workflowName: Type.Optional(Type.String({ minLength: 1, maxLength: 120, [RULE]: 'workflowName must be 1 to 120 characters' })),
  workflowId: Type.Optional(Id),
  graph: Type.Optional(Type.Object({}, { additionalProperties: true, [RULE]: 'graph must be an object with steps' })),
  script: Type.Optional(Type.String({ [RULE]: 'script must be a string' })),
  input: Type.Optional(Type.Unknown()),
  idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 128, [RULE]: 'idempotencyKey must be 1 to 128 characters' })),
  budget: Type.Optional(Type.Object({
    maxCredits: Type.Optional(Type.Number({ exclusiveMinimum: 0, [RULE]: 'budget.maxCredits must be a number above 0 (omit it rather than send 0)' })),
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, [RULE]: 'budget.maxSteps must be an integer of at least 1 (omit it rather than send 0)' })),
    maxDurationSeconds: Type.Optional(Type.Integer({ minimum: 1, [RULE]: 'budget.maxDurationSeconds must be an integer of at least 1 (omit it rather than send 0)' })),
    maxJobSeconds: Type.Optional(Type.Integer({ minimum: 1, [RULE]: 'budget.maxJobSeconds must be an integer of at least 1 (omit it rather than send 0)' })),
  }, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a budget field', type: 'budget must be an object' } })),
  waitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 55, [RULE]: 'waitSeconds must be an integer from 0 to 55' })),
  correlationKey: Type.Optional(Type.String({ pattern: CORRELATION, [RULE]: 'correlationKey must be 1 to 128 letters, digits, :, _, -, . or /' })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 40, [RULE]: 'each tag must be 1 to 40 characters' }), { maxItems: 10, [RULE]: { maxItems: 'tags may hold at most 10 tags', '*': 'tags must be an array of strings' } })),
  workflowVersionId: Type.Optional(Id),
  composeId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', [RULE]: 'composeId must be 1-128 letters, digits, _ or -' })),
  originThreadId: Type.Optional(Type.String({ pattern: ORIGIN_THREAD, [RULE]: ORIGIN_THREAD_RULE })),
  callback: Type.Optional(Type.Boolean({ [RULE]: 'callback must be a boolean' })),
  notifyMode: Type.Optional(Enum(NOTIFY_MODES, `notifyMode must be one of ${NOTIFY_MODES.join(', ')}`)),
  notifyTarget: Type.Optional(Type.Object({
    channel: Enum(NOTIFY_CHANNELS, `notifyTarget.channel must be one of ${NOTIFY_CHANNELS.join(', ')}`),
    threadId: Type.String({ pattern: ORIGIN_THREAD, [RULE]: 'notifyTarget.threadId must be 1 to 256 characters without control characters' }),
  }, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of notifyTarget', required: '{path} is required', type: 'notifyTarget must be an object {channel, threadId}' } })),
  principal: Type.Optional(Type.Object({
    kind: Enum(['customer'], 'principal.kind must be customer'),
    externalId: Type.String({ pattern: ORIGIN_THREAD, [RULE]: 'principal.externalId must be 1 to 256 characters without control characters' }),
  }, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of principal', required: '{path} is required', type: 'principal must be an object {kind: customer, externalId}' } })),
  workspace: Type.Optional(Type.Object({
    repo: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, [RULE]: 'workspace.repo must be 1 to 2048 characters' })),
    ref: Type.Optional(Type.String({ minLength: 1, maxLength: 256, [RULE]: 'workspace.ref must be 1 to 256 characters' })),
    credentialsRef: Type.Optional(Type.String({ minLength: 1, maxLength: 256, [RULE]: 'workspace.credentialsRef must be 1 to 256 characters' })),
    sizeGb: Type.Integer({ minimum: 1, maximum: 50, [RULE]: 'workspace.sizeGb must be an integer from 1 to 50' }),
  }, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of workspace', required: '{path} is required', type: 'workspace must be an object {repo?, ref?, credentialsRef?, sizeGb}' } })),
  stateSeed: Type.Optional(Type.Unknown()),
}, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of a run start', type: 'the body must be a JSON object' } });
export type StartBodyT = Static<typeof StartBodySchema>;

export const BudgetSchema = StartBodySchema.properties.budget;
export const BatchBodySchema = Type.Object({
  workflowName: Type.Optional(Type.String({ minLength: 1, maxLength: 120, [RULE]: 'workflowName must be 1 to 120 characters' })),
  workflowId: Type.Optional(Id),
  workflowVersionId: Type.Optional(Id),
  items: Type.Array(Type.Unknown(), { minItems: 1, [RULE]: { minItems: 'items must hold at least one item', '*': 'items must be an array of items' } }),
  overCap: Type.Optional(Enum(['gate', 'reject'], 'overCap must be gate or reject')),
  inFlight: Type.Optional(Enum(['allow', 'forbid'], 'inFlight must be allow or forbid')),
  budget: BudgetSchema,
}, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of a batch start', type: 'the body must be a JSON object' } });
export type BatchBodyT = Static<typeof BatchBodySchema>;
export const BatchAnswer = Open('{batchId, accepted, items: [{idempotencyKey, runId?, status (queued, gated, replayed, rejected), code?, gate?}]}');

export const StartAnswer = Open('202: {runId, status, watchHint}; 200: a replay of the same key, or (waitSeconds) the settled run\'s detail');

export const CancelBody = Type.Object({
  mode: Type.Optional(Enum(['request', 'force'], 'mode must be request or force')),
  reason: Type.Optional(Type.String({ maxLength: 2000, [RULE]: 'reason must be at most 2000 characters' })),
}, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of a cancel', type: 'the body must be a JSON object' } });
export type CancelBodyT = Static<typeof CancelBody>;
export const CancelAnswer = Open('{cancelRequested, state, status, transitioned, requestedAt?, nextAction, forceAvailableAt?, forced?}');
export const RunDetail = Open('a run detail (spec 03 part 2.4)');

export const DefinitionParams = Type.Object({ agentId: Type.String(), workflowId: Id });
export const RollupQuery = Type.Object({
  from: Type.Optional(Type.String({ maxLength: 40, [RULE]: 'from must be Unix milliseconds or an ISO 8601 date-time' })),
  to: Type.Optional(Type.String({ maxLength: 40, [RULE]: 'to must be Unix milliseconds or an ISO 8601 date-time' })),
}, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a parameter of this route' } });
export type RollupQueryT = Static<typeof RollupQuery>;
export const RollupAnswer = Open('{workflowId, bucket: day, from, to, rows: [{date, runs, completed, failed, cancelled, suspended, p50DurationMs, p95DurationMs, creditsTotal, stepFailures}]}');

export const StepParams = Type.Object({ agentId: Type.String(), runId: Type.String({ maxLength: 128, [RULE]: 'runId must be at most 128 characters' }), stepId: Type.String({ maxLength: 64, [RULE]: 'stepId must be at most 64 characters' }) });
const Note = Type.Optional(Type.String({ maxLength: 2000, [RULE]: 'note must be at most 2000 characters' }));
export const RetryBody = Type.Object({ note: Note, resetRetries: Type.Optional(Type.Boolean({ [RULE]: 'resetRetries must be a boolean' })) },
  { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of a retry', type: 'the body must be a JSON object' } });
export type RetryBodyT = Static<typeof RetryBody>;
export const ResolveBody = Type.Object({ outcome: Type.Optional(Enum(['skip', 'complete', 'fail'], 'outcome must be skip, complete or fail')), output: Type.Optional(Type.Unknown()), note: Note },
  { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of a resolve', type: 'the body must be a JSON object' } });
export type ResolveBodyT = Static<typeof ResolveBody>;
const Cap = (name: string) => Type.Optional(Type.Integer({ minimum: 1, [RULE]: `${name} must be an integer of at least 1` }));
export const BudgetBody = Type.Object({
  maxCredits: Type.Optional(Type.Number({ exclusiveMinimum: 0, [RULE]: 'maxCredits must be a number above 0' })),
  maxSteps: Cap('maxSteps'), maxJobSeconds: Cap('maxJobSeconds'), maxDurationSeconds: Cap('maxDurationSeconds'), note: Note,
}, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a field of a budget raise', type: 'the body must be a JSON object' } });
export type BudgetBodyT = Static<typeof BudgetBody>;
export const EventsQuery = Type.Object({
  after: Type.Optional(Type.String({ pattern: '^\\d{1,9}$', [RULE]: 'after must be a whole number (an event seq), 0 or more' })),
  limit: Type.Optional(LimitParam({ fallback: 50, max: 100 })),
}, { additionalProperties: false, [RULE]: { additionalProperties: '{path} is not a parameter of this route' } });
export type EventsQueryT = Static<typeof EventsQuery>;
export const EventsPage = Type.Object({
  items: Type.Array(Type.Object({
    seq: Type.Integer(), kind: Type.String(), at: Type.Integer(),
    stepId: Type.Optional(Type.String()), attempt: Type.Optional(Type.Integer()), status: Type.Optional(Type.String()), code: Type.Optional(Type.String()),
  })),
  nextAfter: Type.Integer(),
});
export const RecoveryAnswer = Open('the action\'s answer, or its no-op form (spec 03 part 4.3)');
