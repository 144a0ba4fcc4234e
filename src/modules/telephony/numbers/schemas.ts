/** Request and response schemas of the phone number routes (spec 02 parts 2.2, 4.2). */
import { Type, type Static } from '@sinclair/typebox';
import { RULE } from '../../../api/kernel/schema.js';
import { errors, Success } from '../schemas.js';
import { LIST_LIMIT } from './service.js';

const NumberType = Type.Union([Type.Literal('mobile-lvn'), Type.Literal('landline'), Type.Literal('landline-toll-free')]);

export const PhoneNumber = Type.Object(
  {
    id: Type.String(),
    msisdn: Type.String({ description: 'E.164 digits, no leading +' }),
    country: Type.String(),
    type: Type.String(),
    capabilities: Type.Array(Type.String()),
    orgId: Type.String(),
    purchasedBy: Type.Optional(Type.String()),
    purchasedByEmail: Type.Optional(Type.String()),
    status: Type.String(),
    createdAt: Type.Number({ description: 'Unix ms' }),
    transport: Type.String(),
    tenDlcCampaignId: Type.Optional(Type.String()),
    tfnRegistrationId: Type.Optional(Type.String()),
  },
  { description: 'PhoneNumber (spec 02 part 2.2)' },
);

const Available = Type.Object({
  msisdn: Type.String(),
  country: Type.String(),
  type: Type.String(),
  features: Type.Array(Type.String()),
  cost: Type.Optional(Type.String()),
  transport: Type.String(),
});

export const SearchQuery = Type.Object({
  country: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 3166-1 alpha-2 (upper-cased); required' })),
  transport: Type.Optional(Type.String({ maxLength: 64, description: '`carrier-a` (default) or `carrier-b`' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, [RULE]: 'limit must be a positive integer (above 50 it is taken as 50)', description: 'default 10, at most 50' })),
  type: Type.Optional(Type.Union([NumberType], { [RULE]: 'type must be one of mobile-lvn, landline, landline-toll-free', description: 'carrier-b only' })),
  features: Type.Optional(Type.String({ maxLength: 64, description: 'carrier-b only; comma-separated, e.g. voice,sms' })),
  contains: Type.Optional(Type.String({ pattern: '^[0-9]{0,15}$', [RULE]: 'contains must be up to 15 digits', description: 'carrier-b only' })),
  search_pattern: Type.Optional(Type.Integer({ minimum: 0, maximum: 2, [RULE]: 'search_pattern must be 0 (starts with), 1 (contains) or 2 (ends with)', description: 'carrier-b only; default 1' })),
});
export type SearchQuery = Static<typeof SearchQuery>;

export const PurchaseBody = Type.Object(
  {
    msisdn: Type.Optional(Type.String({ maxLength: 32, [RULE]: 'msisdn must be an E.164 phone number' })),
    transport: Type.Optional(Type.String({ maxLength: 64 })),
    country: Type.Optional(Type.String({ maxLength: 64, description: 'required for carrier-b' })),
  },
  { additionalProperties: false },
);
export type PurchaseBody = Static<typeof PurchaseBody>;

export const ListQuery = Type.Object({
  status: Type.Optional(Type.Union(['active', 'suspended', 'released'].map((s) => Type.Literal(s)), { [RULE]: 'status must be one of active, suspended, released' })),
  country: Type.Optional(Type.String({ maxLength: 64 })),
  transport: Type.Optional(Type.Union(['carrier-a', 'carrier-b', 'byo-sip'].map((s) => Type.Literal(s)), { [RULE]: 'transport must be one of carrier-a, carrier-b, byo-sip' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT.max, [RULE]: `limit must be an integer from 1 to ${LIST_LIMIT.max}`, description: `default ${LIST_LIMIT.default}` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, [RULE]: 'offset must be a non-negative integer' })),
});
export type ListQuery = Static<typeof ListQuery>;

export const NumberParams = Type.Object({ orgId: Type.String(), msisdn: Type.String() });

const tags = ['telephony: phone-numbers'];
const orgParams = Type.Object({ orgId: Type.String() });
export const schemas = {
  search: { tags, summary: 'Search carrier inventory (any authenticated credential)', querystring: SearchQuery, response: { 200: Type.Object({ numbers: Type.Array(Available), count: Type.Integer() }), ...errors } },
  purchase: { tags, summary: 'Buy a number (telephony:provision)', params: orgParams, body: PurchaseBody, response: { 201: PhoneNumber, ...errors } },
  list: { tags, summary: 'List the organization\'s numbers; count is the total matching', params: orgParams, querystring: ListQuery, response: { 200: Type.Object({ numbers: Type.Array(PhoneNumber), count: Type.Integer() }), ...errors } },
  get: { tags, summary: 'Read a number the organization owns', params: NumberParams, response: { 200: PhoneNumber, ...errors } },
  release: { tags, summary: 'Release a number to its carrier (irreversible)', params: NumberParams, response: { 200: Success, ...errors } },
  suspend: { tags, summary: 'Suspend an active number', params: NumberParams, response: { 201: PhoneNumber, ...errors } },
  reactivate: { tags, summary: 'Reactivate a suspended number', params: NumberParams, response: { 201: PhoneNumber, ...errors } },
  configureVoice: { tags, summary: 'Re-apply carrier voice configuration (carrier-b voice numbers)', params: NumberParams, response: { 201: Success, ...errors } },
};
