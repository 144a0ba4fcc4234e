/**
 * The channel routes' schemas (TypeBox): enforced before a handler runs, a
 * failure answered `400` in the framework shape with every failed rule in
 * `message`; answers serialised through the strict response schemas.
 */
import { Type, type Static } from '@sinclair/typebox';
import { RULE } from '../../api/kernel/schema.js';
import { Instant, Nullable, OneOfStrings } from '../../api/kernel/schema-types.js';
import { DELIVERY_ORIGINS, DELIVERY_STATUSES, RECEIPT_FUTURE_MINUTES, RECEIPT_PAST_DAYS, SEND_CHANNELS } from './model.js';

/** One of `values`, one rule when it is not. */
const oneOf = <const T extends readonly string[]>(values: T, rule: string) => OneOfStrings<T[number]>(values, { rule });

const id = (what: string) => Type.String({ minLength: 1, maxLength: 256, [RULE]: `${what} must be a string of 1-256 characters` });
const email = (what: string) => Type.String({ format: 'email', maxLength: 320, [RULE]: `${what} must be an email address` });

export const RecipientSchema = Type.Object(
  {
    userId: Type.Optional(id('to.userId')),
    phoneNumber: Type.Optional(Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', [RULE]: 'to.phoneNumber must be an E.164 number (+ and 7-15 digits)' })),
    email: Type.Optional(email('to.email')),
    conversationId: Type.Optional(id('to.conversationId')),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1, [RULE]: 'to must hold exactly one of userId, phoneNumber, email, conversationId' },
);

const channelIdentifier = Type.Optional(Type.String({ minLength: 1, maxLength: 128, [RULE]: 'channelIdentifier must be a string of 1-128 characters' }));

export const SendBody = Type.Object(
  {
    channel: oneOf(SEND_CHANNELS, `channel must be one of ${SEND_CHANNELS.join(', ')}`),
    to: RecipientSchema,
    text: Type.String({ minLength: 1, maxLength: 65_536, [RULE]: 'text must be a string of 1-65536 characters' }),
    options: Type.Optional(Type.Object({
      channelIdentifier,
      chatapp: Type.Optional(Type.Object({
        onClosedWindow: Type.Optional(oneOf(['queue', 'fail'] as const, 'options.chatapp.onClosedWindow must be queue or fail')),
      }, { additionalProperties: false })),
    }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const TemplateBody = Type.Object(
  {
    to: RecipientSchema,
    templateName: Type.String({ minLength: 1, maxLength: 512, [RULE]: 'templateName must be a string of 1-512 characters' }),
    language: Type.Optional(Type.String({ pattern: '^[a-z]{2,3}(_[A-Z]{2})?$', [RULE]: 'language must be a language code such as en or en_US' })),
    components: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 50 })),
    text: Type.Optional(Type.String({ maxLength: 65_536 })),
    channelIdentifier,
  },
  { additionalProperties: false },
);

export const ReactionBody = Type.Object(
  {
    to: RecipientSchema,
    messageId: id('messageId'),
    emoji: Type.String({ maxLength: 64, [RULE]: 'emoji must be a single emoji, or an empty string to remove the reaction' }),
    channelIdentifier,
  },
  { additionalProperties: false },
);

const messageRef = (what: string) => Type.String({ minLength: 1, maxLength: 998, pattern: '^[^\\s<>]+@[^\\s<>]+$|^<[^\\s<>]+@[^\\s<>]+>$', [RULE]: `${what} must be a message id (angle brackets optional)` });

export const EmailBody = Type.Object(
  {
    to: RecipientSchema,
    text: Type.Optional(Type.String({ maxLength: 1_048_576 })),
    html: Type.Optional(Type.String({ maxLength: 1_048_576 })),
    richBody: Type.Optional(Type.String({ maxLength: 1_048_576 })),
    subject: Type.Optional(Type.String({ maxLength: 998, pattern: '^[^\\r\\n]*$', [RULE]: 'subject must be one line of at most 998 characters' })),
    cc: Type.Optional(Type.Array(email('cc[]'), { maxItems: 50 })),
    bcc: Type.Optional(Type.Array(email('bcc[]'), { maxItems: 50 })),
    attachments: Type.Optional(Type.Array(Type.Object({
      filename: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\r\\n/\\\\]+$', [RULE]: 'attachments[].filename must be a file name of 1-255 characters' }),
      contentType: Type.String({ pattern: '^[a-zA-Z0-9!#$&^_.+-]+/[a-zA-Z0-9!#$&^_.+-]+$', maxLength: 255, [RULE]: 'attachments[].contentType must be a media type such as application/pdf' }),
      url: Type.String({ minLength: 1, maxLength: 2048, [RULE]: 'attachments[].url must be a URL of at most 2048 characters' }),
    }, { additionalProperties: false }), { maxItems: 20 })),
    inReplyTo: Type.Optional(messageRef('inReplyTo')),
    references: Type.Optional(Type.Array(messageRef('references[]'), { maxItems: 100 })),
    channelIdentifier,
  },
  { additionalProperties: false },
);

/** The most recipients one bulk template trigger takes (contract C20). */
export const TRIGGER_MAX_RECIPIENTS = 1000;
const RECIPIENTS_RULE = `recipients must hold 1-${TRIGGER_MAX_RECIPIENTS} recipients`;

// Path segments longer than 100 characters are answered 414 by the router before any schema.
const segment = (what: string) => Type.String({ minLength: 1, maxLength: 100, [RULE]: `${what} must be a string of 1-100 characters` });
export const TriggerParams = Type.Object({ agentId: Type.String(), channelId: segment('channelId'), templateId: segment('templateId') });

const ONE_RECIPIENT = '{path} must hold exactly one of userId and phoneNumber';
const TriggerRecipient = Type.Object(
  {
    userId: Type.Optional(id('recipients[].userId')),
    phoneNumber: Type.Optional(Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', [RULE]: 'recipients[].phoneNumber must be an E.164 number (+ and 7-15 digits)' })),
    params: Type.Optional(Type.Record(
      Type.String({ pattern: '^[A-Za-z0-9_]{1,64}$' }),
      Type.String({ maxLength: 1024, [RULE]: 'recipients[].params values must be strings of at most 1024 characters' }),
      {
        additionalProperties: false, maxProperties: 20, description: 'Template parameter values by name ("1", "2" for positional ones)',
        [RULE]: { additionalProperties: 'recipients[].params names must be 1-64 letters, digits or _', maxProperties: 'recipients[].params holds at most 20 values', '*': 'recipients[].params must be an object of strings' },
      },
    )),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of userId and phoneNumber, and optional params',
    // Exactly one of userId and phoneNumber beside the optional params, without a choice of
    // branches (whose failures would each speak): one or two fields, two only with params, never
    // userId with phoneNumber.
    minProperties: 1,
    maxProperties: 2,
    dependencies: {
      params: { minProperties: 2, [RULE]: ONE_RECIPIENT },
      userId: { not: { required: ['phoneNumber'] }, [RULE]: ONE_RECIPIENT },
    },
    [RULE]: { minProperties: ONE_RECIPIENT, maxProperties: ONE_RECIPIENT },
  },
);

export const TriggerBody = Type.Object(
  {
    recipients: Type.Array(TriggerRecipient, {
      minItems: 1, maxItems: TRIGGER_MAX_RECIPIENTS,
      [RULE]: { minItems: RECIPIENTS_RULE, maxItems: RECIPIENTS_RULE, '*': 'recipients must be an array of recipients' },
    }),
  },
  { additionalProperties: false },
);

export const TriggerResultSchema = Type.Object(
  {
    results: Type.Array(Type.Object({}, { additionalProperties: true, description: "The messaging vendor's own response for that recipient, as it came" }), {
      description: 'One per recipient, in the order of recipients',
    }),
  },
  { additionalProperties: false },
);

export const SendHeaders = Type.Object({
  'x-idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$', [RULE]: 'X-Idempotency-Key must be 1-255 printable characters' })),
});

export const AgentParams = Type.Object({ agentId: Type.String() });
export const DeliveryParams = Type.Object({ agentId: Type.String(), deliveryId: Type.String() });

/*
 * The answers' schemas below are also their serializers: no union (anyOf) in them, which the
 * serializer writes by validating each value against the branches in turn (for a list of 50
 * deliveries with their histories, most of the route's time); Nullable and OneOfStrings instead.
 */

export const SendResultSchema = Type.Object(
  {
    deliveryId: Type.String(),
    status: OneOfStrings(DELIVERY_STATUSES),
    delivered: Type.Boolean(),
    recorded: Type.Boolean(),
    queuedForWindow: Type.Boolean(),
    userId: Nullable(Type.String()),
    address: Nullable(Type.String()),
    messageId: Nullable(Type.String()),
    warning: Type.Optional(Type.String()),
    // Present (true) only on a replay of an X-Idempotency-Key: nothing was sent for this request.
    idempotentReplay: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

const FailureSchema = Type.Object({
  category: Type.String(), provider: Type.String(), code: Nullable(Type.String()), title: Type.String(), detail: Nullable(Type.String()),
  href: Nullable(Type.String()), retryable: Type.Boolean(), owner: Type.String(),
}, { additionalProperties: false });

export const DeliverySchema = Type.Object(
  {
    id: Type.String(), agentId: Type.String(), channel: Type.String(), channelIdentifier: Nullable(Type.String()), from: Type.String(),
    to: Type.Object({ userId: Type.Optional(Type.String()), phoneNumber: Type.Optional(Type.String()), email: Type.Optional(Type.String()), conversationId: Type.Optional(Type.String()) }, { additionalProperties: false }),
    userId: Nullable(Type.String()), address: Nullable(Type.String()), provider: Type.String(),
    origin: OneOfStrings(DELIVERY_ORIGINS),
    status: OneOfStrings(DELIVERY_STATUSES),
    failure: Nullable(FailureSchema),
    history: Type.Array(Type.Object({
      status: Type.String(), at: Type.String(), source: OneOfStrings(['send', 'callback', 'sweep'] as const),
      // Only on the entry that gave the record its origin (a queued send's flush: queued_flush).
      origin: Type.Optional(OneOfStrings(DELIVERY_ORIGINS)),
    }, { additionalProperties: false })),
    messageId: Nullable(Type.String()), template: Nullable(Type.String()), idempotencyKey: Nullable(Type.String()),
    cost: Type.Optional(Type.Object({}, { additionalProperties: true })),
    createdAt: Type.String(), updatedAt: Type.String(),
  },
  { additionalProperties: false },
);

export const DeliveriesQuery = Type.Object({
  userId: Type.Optional(id('userId')),
  status: Type.Optional(oneOf(DELIVERY_STATUSES, `status must be one of ${DELIVERY_STATUSES.join(', ')}`)),
  channel: Type.Optional(oneOf(SEND_CHANNELS, `channel must be one of ${SEND_CHANNELS.join(', ')}`)),
  since: Type.Optional(Instant()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, [RULE]: 'limit must be an integer from 1 to 200' })),
}, { additionalProperties: false });

const ReceiptFailure = Type.Object({
  category: Type.Union(['window_closed', 'unreachable', 'billing', 'opted_out', 'throttled', 'auth', 'template', 'media', 'invalid_request', 'compliance', 'experiment', 'provider', 'unknown'].map((c) => Type.Literal(c))),
  code: Type.Optional(Type.String({ maxLength: 128 })), title: Type.String({ maxLength: 256 }), detail: Type.Optional(Type.String({ maxLength: 2048 })),
  href: Type.Optional(Type.String({ maxLength: 2048 })), retryable: Type.Boolean(),
  owner: Type.Union([Type.Literal('customer'), Type.Literal('recipient'), Type.Literal('platform'), Type.Literal('vendor')]),
}, { additionalProperties: false });

/** What a receipt's `at` or `receivedAt` may be (checked against the clock by the service). */
const RECEIPT_TIME = `RFC 3339 date-time with a zone, within ${RECEIPT_PAST_DAYS} days before now and ${RECEIPT_FUTURE_MINUTES} minutes after`;

export const ReceiptBody = Type.Union([
  Type.Object({
    type: Type.Literal('status'), provider: id('provider'), eventId: id('eventId'), messageId: id('messageId'),
    status: Type.Union([Type.Literal('sent'), Type.Literal('delivered'), Type.Literal('read'), Type.Literal('failed')]),
    at: Type.Optional(Instant({ description: RECEIPT_TIME })), failure: Type.Optional(ReceiptFailure),
  }, { additionalProperties: false }),
  Type.Object({
    type: Type.Literal('inbound'), provider: id('provider'), eventId: id('eventId'), agentId: id('agentId'), userId: id('userId'),
    channel: Type.Union(SEND_CHANNELS.map((c) => Type.Literal(c))), address: id('address'), conversationId: Type.Optional(id('conversationId')),
    messageId: id('messageId'), receivedAt: Type.Optional(Instant({ description: RECEIPT_TIME })),
  }, { additionalProperties: false }),
]);

export const ReceiptResult = Type.Object({
  eventId: Type.String(), duplicate: Type.Boolean(), deliveryId: Nullable(Type.String()), status: Nullable(Type.String()),
  flushed: Type.Array(Type.String()),
}, { additionalProperties: false });

export type SendBodyT = Static<typeof SendBody>;
export type TemplateBodyT = Static<typeof TemplateBody>;
export type ReactionBodyT = Static<typeof ReactionBody>;
export type EmailBodyT = Static<typeof EmailBody>;
export type DeliveriesQueryT = Static<typeof DeliveriesQuery>;
export type TriggerBodyT = Static<typeof TriggerBody>;
export type TriggerParamsT = Static<typeof TriggerParams>;
export type ReceiptBodyT = Static<typeof ReceiptBody>;

const bare = Type.Object({ statusCode: Type.Integer(), error: Type.String(), message: Type.Union([Type.String(), Type.Array(Type.String())]) }, { additionalProperties: true });
export const errorResponses = { 400: bare, 401: bare, 403: bare, 404: bare, 409: bare, 429: bare };
