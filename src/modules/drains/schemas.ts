/**
 * The drain family's route schemas (spec 01 parts 2.1 and 4): what a body,
 * a query and an answer may hold, enforced by the kernel before the handler
 * runs and when the answer is serialised, and published in the OpenAPI
 * document. Each rule carries the words the API answers with (`x-rule`);
 * what needs more than the body's shape (an endpoint that is public, a scrub
 * pattern that compiles, a header the service sets itself) is validate.ts's.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DRAIN_STATES, DRAIN_TYPES, ENVIRONMENTS, SEVERITIES } from '../../model/drain.js';
import { DELIVERY_KINDS } from '../../model/delivery.js';
import { DROP_REASONS, type DropReason } from '../../model/drop-reasons.js';
import { RULE, type RuleText } from '../../api/kernel/schema.js';
import { RESOURCE_ID } from '../../api/kernel/access.js';
import { CursorParam, errorResponses, LimitParam, Nullable, optionals } from '../../api/kernel/schema-types.js';

export const VENDOR_A_SITES = ['us1', 'us3', 'us5', 'eu1', 'ap1', 'gov'] as const;
export const LIMITS = { headers: 10, redact: 32, scrubRules: 20, name: 64, secret: 256, headerValue: 4096, sources: 32, agents: 1000 } as const;

/** The rules whose failure names the list entry (`headers[0]`) rather than a field inside it. */
export const HEADER_SHAPE = 'each header must be {name: string, value: string}';
export const SCRUB_RULE_SHAPE = 'each rule is {id, pattern, flags?}';
export const PAUSE_BODY = 'body is optional: {reason: string}';

const NOT_NULL = '{path} must not be null';
/** A field's rule, and a null given where the field takes none. */
const field = (rules: RuleText): RuleText => (typeof rules === 'string' ? { null: NOT_NULL, '*': rules } : { null: NOT_NULL, ...rules });

const oneOf = <T extends string>(name: string, values: readonly T[], extra: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...extra, [RULE]: field(`${name} must be one of ${values.join(', ')}`) });

const list = <T extends TSchema>(name: string, items: T, max: number, unit = 'entries', extra: Record<string, unknown> = {}) =>
  Type.Array(items, { maxItems: max, ...extra, [RULE]: field({ type: `${name} must be an array`, maxItems: `${name} holds at most ${max} ${unit}` }) });

const HeaderInput = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$', [RULE]: { pattern: 'header name must be 1-64 letters, digits or hyphens', '*': HEADER_SHAPE } }),
    value: Type.String({
      pattern: `^[\\t\\x20-\\x7e\\x80-\\xff]{1,${LIMITS.headerValue}}$`,
      description: 'write-only: read back as its last four characters',
      [RULE]: { pattern: 'header value must be 1-4096 visible characters without CR, LF or NUL', '*': HEADER_SHAPE },
    }),
  },
  { [RULE]: HEADER_SHAPE },
);

const ScrubRuleInput = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, [RULE]: SCRUB_RULE_SHAPE }),
    pattern: Type.String({ description: 'RE2 syntax; refused when it does not compile or could cost too much', [RULE]: SCRUB_RULE_SHAPE }),
    flags: Type.Optional(Type.String({ [RULE]: SCRUB_RULE_SHAPE })),
  },
  { additionalProperties: false, [RULE]: SCRUB_RULE_SHAPE },
);

const SAMPLING_RULE = 'sampling is {debug: n} with 0 < n <= 1; only debug is sampleable';
const Sampling = Type.Object(
  { debug: Type.Number({ exclusiveMinimum: 0, maximum: 1, [RULE]: SAMPLING_RULE }) },
  { additionalProperties: false, [RULE]: field(SAMPLING_RULE) },
);
const Redact = list('redact', Type.String({ minLength: 1, maxLength: 256, [RULE]: 'each redact key is a non-empty string' }), LIMITS.redact);
const ScrubRules = list('scrubRules', ScrubRuleInput, LIMITS.scrubRules, 'rules');
const AGENTS_RULE = 'agents is "*" or a list of agent ids';

/** The fields a create and a PATCH share, in the order the rules are checked. */
const drainFields = {
  name: Type.String({ minLength: 1, maxLength: LIMITS.name, [RULE]: field(`name must be a string of 1 to ${LIMITS.name} characters`) }),
  endpoint: Type.String({
    minLength: 1, maxLength: 2048,
    description: 'https only; never a private, loopback, link-local or metadata address; vendor-a drains take site instead',
    [RULE]: field('endpoint must be a string of 1 to 2048 characters'),
  }),
  site: oneOf('site', VENDOR_A_SITES, { description: 'vendor-a only' }),
  format: oneOf('format', ['json', 'ndjson'] as const, { description: 'http only' }),
  secret: Type.String({
    minLength: 16, maxLength: LIMITS.secret, pattern: '^[^\\x00-\\x1f\\x7f]*$',
    description: 'http only; generated when omitted on create; a whsec_ secret must hold a 24-64 byte key',
    [RULE]: field({ pattern: 'secret must not contain control characters', '*': `secret must be a string of 16 to ${LIMITS.secret} characters` }),
  }),
  headers: Type.Array(HeaderInput, {
    maxItems: LIMITS.headers,
    [RULE]: field({ type: 'headers must be an array of {name, value}', maxItems: `headers holds at most ${LIMITS.headers} entries` }),
  }),
  sources: list('sources', Type.String({ pattern: '^(\\*|[a-z_-]{1,64})$', [RULE]: 'each source is lowercase letters, _ or -' }), LIMITS.sources, 'entries', {
    description: '"*" among them selects every source but the content ones',
  }),
  minSeverity: oneOf('minSeverity', SEVERITIES),
  agents: Type.Union([
    list('agents', Type.String({ minLength: 1, maxLength: 128, [RULE]: AGENTS_RULE }), LIMITS.agents),
    Type.Literal('*', { [RULE]: AGENTS_RULE }),
  ]),
  environments: Type.Array(Type.Unsafe<(typeof ENVIRONMENTS)[number]>({ type: 'string', enum: [...ENVIRONMENTS], [RULE]: 'environments holds production and/or sandbox' }), {
    minItems: 1, maxItems: 2,
    [RULE]: field({ type: 'environments must be an array', maxItems: 'environments holds at most 2 entries', minItems: 'environments must not be empty' }),
  }),
  sampling: Sampling,
  includeContent: Type.Boolean({ [RULE]: field('includeContent must be a boolean') }),
  includeContentAck: Type.Boolean({ [RULE]: field('includeContentAck must be a boolean') }),
  redact: Redact,
  scrubRules: ScrubRules,
};

/** What a body that is not a drain's answers: every other rule is its field's. */
const BODY_RULE = { type: 'body must be a JSON object', additionalProperties: '{path} is not a drain field' };

const { name, ...optional } = drainFields;
export const DrainCreateBody = Type.Object(
  {
    name,
    type: oneOf('type', DRAIN_TYPES),
    ...optionals(optional),
  },
  { additionalProperties: false, [RULE]: BODY_RULE },
);

/** A PATCH: any create field but type; null clears sampling, redact and scrubRules. */
export const DrainPatchBody = Type.Object(
  {
    ...optionals(drainFields),
    type: Type.Optional(Type.Never({ description: 'fixed at creation', [RULE]: 'type cannot be changed after creation' })),
    sampling: Type.Optional(Type.Union([Sampling, Type.Null({ [RULE]: SAMPLING_RULE })])),
    redact: Type.Optional(Type.Union([Redact, Type.Null({ [RULE]: 'redact must be an array' })])),
    scrubRules: Type.Optional(Type.Union([ScrubRules, Type.Null({ [RULE]: 'scrubRules must be an array' })])),
  },
  { additionalProperties: false, [RULE]: BODY_RULE },
);

export type DrainCreateBody = Static<typeof DrainCreateBody>;
export type DrainPatchBody = Static<typeof DrainPatchBody>;

export const PauseBody = Type.Union(
  [
    Type.Object(
      { reason: Type.Optional(Type.String({ maxLength: 256, [RULE]: 'reason is a string of at most 256 characters, without NUL or unpaired surrogates' })) },
      { additionalProperties: false, [RULE]: PAUSE_BODY },
    ),
    Type.Null({ [RULE]: PAUSE_BODY }),
  ],
  { description: 'Optional' },
);
export type PauseBody = Static<typeof PauseBody>;

// ---- answers

const Instant = Type.String({ format: 'date-time' });
const Header = Type.Object({ name: Type.String(), last4: Type.String({ description: "the value's last four characters; empty when shorter than 8" }) }, { additionalProperties: false });
const Window = Type.Object({ startedAt: Instant, expiresAt: Instant }, { additionalProperties: false });

const Verification = Type.Object(
  {
    attemptedAt: Instant,
    outcome: Type.String({ enum: ['ok', 'failed'] }),
    statusCode: Type.Optional(Type.Integer()),
    latencyMs: Type.Optional(Type.Number()),
    endpoint: Type.Optional(Type.String({ description: 'the destination this attempt verified' })),
    errorClass: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String({ description: 'why it failed, in words that name the fix' })),
  },
  { additionalProperties: false },
);

/** Every reason, always present (model/drop-reasons.ts); sampling and selector are not failures and stay out of `dropped`. */
const DroppedByReason = Type.Object(
  Object.fromEntries(DROP_REASONS.map((r) => [r, Type.Integer()])) as Record<DropReason, ReturnType<typeof Type.Integer>>,
  { additionalProperties: false, description: 'records not delivered, by reason: quota, horizon, permanent, oversize, dead_letter (failures), sampling, selector (the drain\'s own choice)' },
);

const Health = Type.Object(
  {
    lastSuccessAt: Nullable(Instant),
    lastFailureAt: Nullable(Instant),
    lastStatusCode: Nullable(Type.Integer()),
    backlog: Type.Integer(),
    backlogBytes: Type.Integer(),
    deliveredCount24h: Type.Integer(),
    droppedCount24h: Type.Integer(),
    rejectedCount24h: Type.Integer(),
    p50LatencyMs: Nullable(Type.Number()),
    p99LatencyMs: Nullable(Type.Number({ description: 'the 99th percentile of the last 24 hours\' batch and test attempts' })),
    scrubHits24h: Type.Integer(),
    pauseReason: Nullable(Type.String({ description: 'manual or quota while paused' })),
    circuitOpenings24h: Type.Integer({ description: 'times the drain\'s circuit opened (a failed probe included) over the 24 hours' }),
    hourly: Type.Array(
      Type.Object(
        {
          h: Type.Integer({ description: 'hours since the epoch' }),
          seen: Type.Integer({ description: 'records of the organization that reached the drain this hour (docs/delivery.md)' }),
          delivered: Type.Integer(),
          dropped: Type.Integer({ description: 'the failures\' total: quota, horizon, permanent, oversize, dead_letter' }),
          rejected: Type.Integer(),
          droppedByReason: DroppedByReason,
          p50LatencyMs: Nullable(Type.Number({ description: 'null in an hour without a batch or test attempt' })),
          p99LatencyMs: Nullable(Type.Number()),
          circuitOpenings: Type.Integer({ description: 'times the drain\'s circuit opened in the hour' }),
        },
        { additionalProperties: false },
      ),
      { description: 'the last 24 hours, oldest first' },
    ),
    last24h: Type.Object(
      {
        seen: Type.Integer({ description: 'records of the organization that reached the drain' }),
        delivered: Type.Integer(),
        droppedByReason: DroppedByReason,
        inFlight: Type.Integer({ description: 'seen, less delivered, dropped and parked: records read and not yet settled (0 once the worker is idle)' }),
        parked: Type.Integer({ description: 'records in the backlog now (health.backlog)' }),
      },
      { additionalProperties: false, description: 'where every record went: seen = delivered + every droppedByReason + inFlight + parked' },
    ),
  },
  { additionalProperties: false },
);

const Quota = Type.Object(
  {
    eventsPerDay: Type.Integer(),
    bytesPerDay: Type.Integer(),
    usedEvents: Type.Integer(),
    usedBytes: Type.Integer(),
    resetsAt: Instant,
    degradation: Type.String({ enum: ['none', 'drop_debug', 'drop_info', 'paused'] }),
  },
  { additionalProperties: false },
);

const readFields = {
  id: Type.String(),
  orgId: Type.String(),
  name: Type.String(),
  type: Type.Unsafe<(typeof DRAIN_TYPES)[number]>({ type: 'string', enum: [...DRAIN_TYPES] }),
  endpoint: Nullable(Type.String()),
  site: Type.Optional(Type.String({ description: 'vendor-a only' })),
  format: Type.String({ enum: ['json', 'ndjson'] }),
  headers: Type.Array(Header),
  selectors: Type.Object(
    {
      sources: Type.Array(Type.String()),
      minSeverity: Type.String({ enum: [...SEVERITIES] }),
      agents: Type.Union([Type.Literal('*'), Type.Array(Type.String())]),
      environments: Type.Array(Type.String({ enum: [...ENVIRONMENTS] })),
      includeContent: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
  sampling: Nullable(Type.Object({ debug: Type.Number() }, { additionalProperties: false })),
  redact: Nullable(Type.Array(Type.String())),
  scrubRules: Nullable(Type.Object({ count: Type.Integer(), ids: Type.Array(Type.String()) }, { additionalProperties: false, description: 'the patterns are never read back' })),
  signing: Type.Optional(Type.Object({ enabled: Type.Boolean(), rotation: Nullable(Window) }, { additionalProperties: false, description: 'http only' })),
  state: Type.Unsafe<(typeof DRAIN_STATES)[number]>({ type: 'string', enum: [...DRAIN_STATES] }),
  verifiedAt: Nullable(Instant),
  verification: Nullable(Verification),
  health: Health,
  circuit: Type.String({ enum: ['closed', 'open', 'half_open'], description: 'the drain-wide brake: open holds live sends (records park) until throttledUntil; half_open: one probe batch is being sent' }),
  throttledUntil: Nullable(Type.String({ format: 'date-time', description: 'while the circuit is open: when its probe may be sent; null otherwise' })),
  quota: Quota,
  version: Type.Integer(),
  createdBy: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
  createdAt: Instant,
  updatedAt: Instant,
};

/** The drain read form: never a header value, never a secret. */
export const DrainRead = Type.Object(readFields, { additionalProperties: false, description: 'LogDrainRead (spec 01 part 2.1)' });
export type DrainRead = Static<typeof DrainRead>;

/** The create answer: the only one that carries the signing secret (http drains). */
export const DrainCreated = Type.Object(
  { ...readFields, secret: Type.Optional(Type.String({ description: 'http drains: the signing secret, shown this once' })) },
  { additionalProperties: false, description: 'LogDrainRead plus the signing secret (http)' },
);

const RotationOpened = Type.Object(
  { secret: Type.String({ description: 'the new signing secret, shown this once' }), rotation: Window },
  { additionalProperties: false, description: 'Without finalize: the new secret and the window during which both sign' },
);
export type RotationOpened = Static<typeof RotationOpened>;

const DeliveryRead = Type.Object(
  {
    id: Type.String(),
    orgId: Type.String(),
    drainId: Type.String(),
    batchId: Type.String(),
    kind: Type.String({ enum: [...DELIVERY_KINDS] }),
    attempt: Type.Integer(),
    recordCount: Type.Optional(Nullable(Type.Integer())),
    bytes: Type.Optional(Nullable(Type.Integer())),
    bytesCompressed: Type.Optional(Nullable(Type.Integer())),
    statusCode: Type.Optional(Nullable(Type.Integer())),
    latencyMs: Type.Optional(Nullable(Type.Number())),
    ok: Type.Boolean(),
    errorClass: Type.Optional(Nullable(Type.String())),
    responseExcerpt: Type.Optional(Nullable(Type.String({ description: 'scrubbed of the drain\'s header values and secrets' }))),
    scrubHits: Type.Optional(Nullable(Type.Integer())),
    startedAt: Instant,
    expiresAt: Instant,
    firstRecordId: Type.Optional(Nullable(Type.String())),
    lastRecordId: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false },
);
export type DeliveryRead = Static<typeof DeliveryRead>;

const AuditEntryRead = Type.Object(
  {
    id: Type.String(),
    action: Type.String(),
    actor: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
    drainId: Type.String(),
    details: Type.Object({}, { additionalProperties: true, description: 'what spec 01 part 6 lets an entry hold: never a header value or secret' }),
    at: Instant,
  },
  { additionalProperties: false },
);
export type AuditEntryRead = Static<typeof AuditEntryRead>;

// ---- routes

export const OrgParams = Type.Object({ orgId: Type.String() });
export const DrainParams = Type.Object({ orgId: Type.String(), drainId: Type.String() });
export type OrgParams = Static<typeof OrgParams>;
export type DrainParams = Static<typeof DrainParams>;

export const AUDIT_ACTIONS = [
  'logs.drain.created', 'logs.drain.updated', 'logs.drain.deleted', 'logs.drain.paused', 'logs.drain.resumed',
  'logs.drain.verified', 'logs.drain.secret_rotated', 'logs.drain.test_sent', 'logs.drain.quota_paused',
  'logs.drain.circuit_opened', 'logs.drain.circuit_closed',
  'logs.drain.replay_requested', 'logs.drain.replay_cancelled',
] as const;

export const RotateQuery = Type.Object({
  finalize: Type.Optional(Type.String({ enum: ['true', 'false'], description: 'true: close the open window', [RULE]: 'finalize must be true or false' })),
});
export const DeliveriesQuery = Type.Object({
  limit: LimitParam({ fallback: 20, max: 100 }),
  cursor: Type.Optional(CursorParam),
  kind: Type.Optional(Type.String({ enum: [...DELIVERY_KINDS], [RULE]: `kind must be one of ${DELIVERY_KINDS.join(', ')}` })),
});
export const AuditQuery = Type.Object({
  drainId: Type.Optional(Type.String({ pattern: RESOURCE_ID.source, [RULE]: 'drainId is malformed' })),
  action: Type.Optional(Type.String({ enum: [...AUDIT_ACTIONS], [RULE]: `action must be one of ${AUDIT_ACTIONS.join(', ')}` })),
  limit: LimitParam({ fallback: 20, max: 100 }),
  cursor: Type.Optional(CursorParam),
});
export type RotateQuery = Static<typeof RotateQuery>;
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;
export type AuditQuery = Static<typeof AuditQuery>;

const errors = errorResponses(400, 401, 403, 404, 409, 422, 429);
const tags = ['log-drains'];

export const schemas = {
  list: {
    tags, summary: 'List the drains of an organization', params: OrgParams,
    response: { 200: Type.Object({ drains: Type.Array(DrainRead), limits: Type.Object({ maxDrains: Type.Integer() }, { additionalProperties: false }) }, { additionalProperties: false }), ...errors },
  },
  create: {
    tags, summary: 'Create a drain (pending_verification); the only answer carrying the secret', params: OrgParams,
    body: DrainCreateBody, response: { 201: DrainCreated, ...errors },
  },
  get: { tags, summary: 'Read a drain', params: DrainParams, response: { 200: DrainRead, ...errors } },
  patch: {
    tags, summary: 'Update a drain (any create field but type; null clears sampling, redact, scrubRules)', params: DrainParams,
    body: DrainPatchBody, response: { 200: DrainRead, ...errors },
  },
  remove: { tags, summary: 'Soft-delete a drain', params: DrainParams, response: { 204: Type.Null({ description: 'Deleted' }), ...errors } },
  verify: {
    tags, summary: 'Start ownership verification', params: DrainParams,
    response: { 202: Type.Object({ verificationId: Type.String(), expiresAt: Instant }, { additionalProperties: false }), ...errors },
  },
  test: {
    tags, summary: 'Send one svc.drain.test record through the delivery path', params: DrainParams,
    response: { 202: Type.Object({ batchId: Type.String(), enqueuedAt: Instant }, { additionalProperties: false }), ...errors },
  },
  pause: { tags, summary: 'Pause a drain', params: DrainParams, body: PauseBody, response: { 200: DrainRead, ...errors } },
  resume: { tags, summary: 'Resume a paused drain (to degraded, or to pending_verification if never verified)', params: DrainParams, response: { 200: DrainRead, ...errors } },
  rotate: {
    tags, summary: 'Rotate the signing secret (24-hour window) or finalize the open window', params: DrainParams, querystring: RotateQuery,
    // Told apart by the secret alone, so that serialising the drain never depends on it validating.
    response: { 200: Type.Unsafe<RotationOpened | DrainRead>({ if: Type.Object({ secret: Type.String() }), then: RotationOpened, else: DrainRead, description: 'Without finalize: {secret, rotation}; with finalize=true: the drain' }), ...errors },
  },
  deliveries: {
    tags, summary: 'Delivery attempts of the last seven days, newest first', params: DrainParams, querystring: DeliveriesQuery,
    response: { 200: Type.Object({ deliveries: Type.Array(DeliveryRead), nextCursor: Nullable(Type.String()) }, { additionalProperties: false }), ...errors },
  },
  audit: {
    tags, summary: 'Audit entries of the organization\'s drains, newest first', params: OrgParams, querystring: AuditQuery,
    response: { 200: Type.Object({ entries: Type.Array(AuditEntryRead), nextCursor: Nullable(Type.String()) }, { additionalProperties: false }), ...errors },
  },
};
