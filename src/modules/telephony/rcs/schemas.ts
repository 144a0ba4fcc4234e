/** Request and response schemas of the RCS agent routes (spec 02 parts 2.3, 4.3; contract telephony T5). */
import { Type, type Static } from '@sinclair/typebox';
import { RULE } from '../../../api/kernel/schema.js';
import { errors, Success } from '../schemas.js';
import { E164_RULE, RCS_LIST_LIMIT } from './service.js';
import { BULK_NUMBERS } from './bulk-list.js';

export const RcsAgent = Type.Object(
  {
    id: Type.String({ description: 'The RCS agent id (the `:agentId` of RCS paths; not a platform agent id)' }),
    orgId: Type.String(),
    senderId: Type.String({ description: 'Carrier business-messaging sender id, unique across organizations' }),
    displayName: Type.String(),
    description: Type.Optional(Type.String()),
    logoUrl: Type.Optional(Type.String()),
    bannerUrl: Type.Optional(Type.String()),
    status: Type.String({ description: '`pending`, `testing`, `live`, `suspended` (PATCH stores any value)' }),
    webhookUrl: Type.Optional(Type.String({ description: 'Stored only; not registered with the carrier' })),
    reserved: Type.Array(Type.String(), { description: 'Always empty' }),
    regions: Type.Array(Type.String()),
    createdBy: Type.String(),
    createdByEmail: Type.Optional(Type.String()),
    linkedAgentId: Type.Optional(Type.String()),
    createdAt: Type.Number({ description: 'Unix ms' }),
  },
  { description: 'RcsAgent (spec 02 part 2.3)' },
);

const text = (field: string, max: number, extra: Record<string, unknown> = {}) =>
  Type.String({ minLength: 1, maxLength: max, [RULE]: `${field} must be a non-empty string of at most ${max} characters`, ...extra });
const url = (field: string) => Type.String({ maxLength: 2048, format: 'uri', [RULE]: `${field} must be an absolute URL of at most 2048 characters` });
const Regions = Type.Array(Type.String({ minLength: 1, maxLength: 64, [RULE]: 'regions must be non-empty strings of at most 64 characters' }), {
  maxItems: 50, [RULE]: { maxItems: 'regions must hold at most 50 entries', '*': 'regions must be an array of strings' },
});

export const RegisterBody = Type.Object(
  {
    senderId: text('senderId', 128),
    displayName: text('displayName', 100),
    description: Type.Optional(Type.String({ maxLength: 2000, [RULE]: 'description must be a string of at most 2000 characters' })),
    logoUrl: Type.Optional(url('logoUrl')),
    bannerUrl: Type.Optional(url('bannerUrl')),
    regions: Type.Optional(Regions),
  },
  { additionalProperties: false },
);
export type RegisterBody = Static<typeof RegisterBody>;

export const PatchBody = Type.Object(
  {
    displayName: Type.Optional(text('displayName', 100)),
    description: Type.Optional(Type.String({ maxLength: 2000, [RULE]: 'description must be a string of at most 2000 characters' })),
    logoUrl: Type.Optional(url('logoUrl')),
    bannerUrl: Type.Optional(url('bannerUrl')),
    status: Type.Optional(text('status', 64, { description: 'Stored as given: neither the value nor the transition is checked' })),
    webhookUrl: Type.Optional(url('webhookUrl')),
    regions: Type.Optional(Regions),
  },
  { additionalProperties: false },
);
export type PatchBody = Static<typeof PatchBody>;

export const LinkBody = Type.Object(
  { luaAgentId: Type.String({ minLength: 1, maxLength: 128, [RULE]: 'luaAgentId must be a non-empty string (the platform agent id)' }) },
  { additionalProperties: false },
);
export type LinkBody = Static<typeof LinkBody>;

export const CapabilityBody = Type.Object(
  { phoneNumber: Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$', [RULE]: E164_RULE }) },
  { additionalProperties: false },
);
export type CapabilityBody = Static<typeof CapabilityBody>;

/** Documents the bulk body; the service checks it, after the agent's status (bodyUnchecked). */
export const BulkBody = Type.Object(
  {
    phoneNumbers: Type.Array(Type.String({ description: 'E.164, + and digits' }), {
      minItems: BULK_NUMBERS.min, maxItems: BULK_NUMBERS.max, uniqueItems: true, description: '500 to 10,000 distinct E.164 numbers',
    }),
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 64, [RULE]: 'status must be a string of at most 64 characters' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: RCS_LIST_LIMIT.max, [RULE]: `limit must be an integer from 1 to ${RCS_LIST_LIMIT.max}`, description: `default ${RCS_LIST_LIMIT.default}` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, [RULE]: 'offset must be a non-negative integer' })),
});
export type ListQuery = Static<typeof ListQuery>;

const Capability = Type.Object({ phoneNumber: Type.String(), isReachable: Type.Boolean(), features: Type.Optional(Type.Array(Type.String())) });
const Bulk = Type.Object({
  reachableUsers: Type.Array(Type.String()),
  totalRandomSampleUserCount: Type.Integer(),
  reachableRandomSampleUserCount: Type.Integer(),
  estimatedReachabilityPercent: Type.Number({ description: 'Rounded to two decimals; 0 when the sample is empty' }),
});

const tags = ['telephony: rcs-agents'];
const orgParams = Type.Object({ orgId: Type.String() });
export const AgentParams = Type.Object({ orgId: Type.String(), agentId: Type.String({ description: 'The RCS agent id' }) });
export const schemas = {
  register: { tags, summary: 'Register an RCS sender (status pending)', params: orgParams, body: RegisterBody, response: { 201: RcsAgent, ...errors } },
  list: { tags, summary: 'List RCS agents; count is the total matching', params: orgParams, querystring: ListQuery, response: { 200: Type.Object({ agents: Type.Array(RcsAgent), count: Type.Integer() }), ...errors } },
  get: { tags, summary: 'Read an RCS agent', params: AgentParams, response: { 200: RcsAgent, ...errors } },
  update: { tags, summary: 'Update an RCS agent (status stored as given; suspended agents refused)', params: AgentParams, body: PatchBody, response: { 200: RcsAgent, ...errors } },
  suspend: { tags, summary: 'Suspend an RCS agent (irreversible through the API)', params: AgentParams, response: { 200: Success, ...errors } },
  link: { tags, summary: 'Record the platform agent of the sender', params: AgentParams, body: LinkBody, response: { 201: RcsAgent, ...errors } },
  unlink: { tags, summary: 'Remove the sender\'s platform agent', params: AgentParams, response: { 200: RcsAgent, ...errors } },
  capability: { tags, summary: 'Check one device\'s RCS reachability (agent testing or live)', params: AgentParams, body: CapabilityBody, response: { 201: Capability, ...errors } },
  bulk: { tags, summary: 'Check 500-10,000 devices\' reachability (agent live, checked first; RCS_BULK_CHECKS_PER_MIN a minute per organization, default 10)', params: AgentParams, body: BulkBody, response: { 201: Bulk, ...errors, 429: errors[400] } },
};
