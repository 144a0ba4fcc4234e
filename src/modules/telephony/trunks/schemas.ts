/** Request and response schemas of the SIP trunk routes (spec 02 parts 2.1, 4.1). */
import { Type, type Static } from '@sinclair/typebox';
import { RULE } from '../../../api/kernel/schema.js';
import { OneOfStrings } from '../../../api/kernel/schema-types.js';
import { errors, Success } from '../schemas.js';
import { USERNAME_PATTERN, USERNAME_RULE } from './digest.js';

const Mode = Type.Union([Type.Literal('optional'), Type.Literal('always'), Type.Literal('never')]);
const Region = Type.Union([Type.Literal('us'), Type.Literal('eu'), Type.Literal('ap')]);
// The answer's forms: an enum is written as it is, where a union's value is validated against each branch.
const ModeOut = OneOfStrings(['optional', 'always', 'never']);
const RegionOut = OneOfStrings(['us', 'eu', 'ap']);

export const Trunk = Type.Object(
  {
    id: Type.String(),
    domain: Type.String(),
    sipEndpoint: Type.String(),
    region: RegionOut,
    status: OneOfStrings(['provisioning', 'active', 'failed', 'suspended', 'deleted']),
    tls: ModeOut,
    srtp: ModeOut,
    digestAuthEnabled: Type.Boolean(),
    digestUsers: Type.Array(Type.String(), { description: 'Usernames only' }),
    acl: Type.Array(Type.Object({ ip: Type.String(), description: Type.Optional(Type.String()), createdAt: Type.Number() })),
    defaultAgentId: Type.Optional(Type.String()),
    createdAt: Type.Number({ description: 'Unix ms' }),
    createdBy: Type.String(),
    createdByEmail: Type.Optional(Type.String()),
    connectionDetails: Type.Object({
      sipUri: Type.String(),
      region: RegionOut,
      transport: Type.Array(Type.String()),
      port: Type.Integer(),
    }),
  },
  { description: 'SipTrunk (spec 02 part 2.1)' },
);

export const TrunkParams = Type.Object({ orgId: Type.String(), trunkId: Type.String() });
export const AclParams = Type.Object({ orgId: Type.String(), trunkId: Type.String(), ip: Type.String({ description: 'The CIDR, URL-encoded (`/` as `%2F`)' }) });
export const UserParams = Type.Object({ orgId: Type.String(), trunkId: Type.String(), username: Type.String() });
export const LinkParams = Type.Object({ orgId: Type.String(), trunkId: Type.String(), agentId: Type.String() });

export const CreateBody = Type.Object(
  {
    region: Type.Optional(Region),
    acl: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64, description: 'CIDRs; checked by the carrier (a malformed one is 422 VENDOR_REJECTED)' })),
    enableDigestAuth: Type.Optional(Type.Boolean()),
    tls: Type.Optional(Mode),
    srtp: Type.Optional(Mode),
  },
  { additionalProperties: false },
);
export type CreateBody = Static<typeof CreateBody>;

export const AclBody = Type.Object(
  {
    ip: Type.String({ maxLength: 64, description: 'A CIDR (a bare address is one host)' }),
    description: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);
export type AclBody = Static<typeof AclBody>;

export const CredentialBody = Type.Object(
  { username: Type.Optional(Type.String({ pattern: USERNAME_PATTERN, [RULE]: USERNAME_RULE })) },
  { additionalProperties: false },
);
export type CredentialBody = Static<typeof CredentialBody>;

const Credential = Type.Object({ username: Type.String(), password: Type.String({ description: '24 letters and digits; returned this once' }) });

const tags = ['telephony: sip-trunks'];
export const schemas = {
  create: { tags, summary: 'Provision a SIP trunk (needs an ACL entry or digest auth)', params: Type.Object({ orgId: Type.String() }), body: CreateBody, response: { 201: Trunk, ...errors } },
  list: { tags, summary: 'List SIP trunks (failed included, deleted excluded); count is the page length', params: Type.Object({ orgId: Type.String() }), response: { 200: Type.Object({ trunks: Type.Array(Trunk), count: Type.Integer() }), ...errors } },
  get: { tags, summary: 'Read a SIP trunk', params: TrunkParams, response: { 200: Trunk, ...errors } },
  remove: { tags, summary: 'Delete a SIP trunk (credentials and ACL go with it)', params: TrunkParams, response: { 200: Success, ...errors } },
  addAcl: { tags, summary: 'Add an ACL entry (at most 16)', params: TrunkParams, body: AclBody, response: { 201: Trunk, ...errors } },
  removeAcl: { tags, summary: 'Remove an ACL entry (never the last)', params: AclParams, response: { 200: Trunk, ...errors } },
  createUser: { tags, summary: 'Create a digest user; the password is returned once', params: TrunkParams, body: CredentialBody, response: { 201: Credential, ...errors } },
  listUsers: { tags, summary: 'List digest usernames', params: TrunkParams, response: { 200: Type.Object({ users: Type.Array(Type.String()) }), ...errors } },
  deleteUser: { tags, summary: 'Delete a digest user', params: UserParams, response: { 200: Success, ...errors } },
  rotateUser: { tags, summary: 'Rotate a digest user\'s password; the new one is returned once', params: UserParams, response: { 201: Credential, ...errors } },
  link: { tags, summary: 'Link the agent that answers the trunk\'s calls', params: LinkParams, response: { 201: Trunk, ...errors } },
  unlink: { tags, summary: 'Unlink the trunk\'s agent', params: TrunkParams, response: { 200: Trunk, ...errors } },
};
