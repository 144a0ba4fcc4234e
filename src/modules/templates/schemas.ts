/** The template routes' request and response schemas (TypeBox; enforced by the kernel, answers serialised through them). */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { RULE } from '../../api/kernel/schema.js';
import { LimitParam } from '../../api/kernel/schema-types.js';

/** Bounds on what a template body may hold (spec 03 part 8 names the skill count and the deploy fields). */
export const TEMPLATE_LIMITS = {
  name: 200, displayName: 200, description: 2000, changelog: 10_000, reason: 2000, marketplaceSkills: 50, declaredTriggers: 100,
  connections: 100, envVars: 100, envText: 500, key: 128, page: 9_999_999, listDefault: 20, listMax: 100,
} as const;

export const TEMPLATE_ID = '^tpl_[A-Za-z0-9]{1,124}$';
const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
const ID = (name: string) => Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', [RULE]: `${name} must be 1-128 letters, digits, _ or -` });
const Text = (name: string, max: number, min = 0) => Type.String({ minLength: min, maxLength: max, [RULE]: `${name} must be ${min > 0 ? `${min}-` : 'at most '}${max} characters` });
const Key = (name: string) => Type.String({ minLength: 1, maxLength: TEMPLATE_LIMITS.key, [RULE]: `${name} must be 1-${TEMPLATE_LIMITS.key} characters` });
export const Visibility = Type.Unsafe<'public' | 'private'>({ type: 'string', enum: ['public', 'private'], [RULE]: 'visibility must be public or private' });
/** Any JSON value: an authored section whose inner shape the spec leaves open. */
const AnyJson = Type.Unknown({ description: 'any JSON value; null, [] or {} clears the section' });

export const CreateBody = Type.Object(
  {
    sourceAgentId: Type.Optional(ID('sourceAgentId')),
    creatorOrgId: Type.Optional(ID('creatorOrgId')),
    name: Text('name', TEMPLATE_LIMITS.name, 1),
    displayName: Text('displayName', TEMPLATE_LIMITS.displayName, 1),
    description: Type.Optional(Text('description', TEMPLATE_LIMITS.description)),
    visibility: Type.Optional(Visibility),
  },
  { additionalProperties: false },
);
export type CreateBody = Static<typeof CreateBody>;

const EnvVar = Type.Object(
  { description: Text('envContract description', TEMPLATE_LIMITS.envText), required: Type.Boolean(), example: Type.Optional(Text('envContract example', TEMPLATE_LIMITS.envText)) },
  { additionalProperties: false },
);
const EnvContract = Type.Record(Type.String({ pattern: ENV_NAME }), EnvVar, {
  additionalProperties: false, maxProperties: TEMPLATE_LIMITS.envVars,
  [RULE]: { maxProperties: `envContract may name at most ${TEMPLATE_LIMITS.envVars} variables`, additionalProperties: 'envContract names must be letters, digits and _, not starting with a digit' },
});

const DeclaredTrigger = Type.Object({ key: Key('declaredTriggers[].key') }, { additionalProperties: true, description: 'A trigger the template declares: a unique `key` and its own fields' });
const MarketplaceSkill = Type.Object(
  { skillId: ID('marketplaceSkills[].skillId'), version: Type.Optional(Text('marketplaceSkills[].version', 64, 1)) },
  { additionalProperties: false },
);
const Connection = Type.Object(
  { key: Key('connections[].key'), type: Text('connections[].type', TEMPLATE_LIMITS.key, 1), required: Type.Boolean() },
  { additionalProperties: false, description: 'A connection requirement (contract templates)' },
);
const InstallPolicy = Type.Object(
  { perWorkspace: Type.Optional(Type.Unsafe<'single' | 'multiple'>({ type: 'string', enum: ['single', 'multiple'], [RULE]: 'installPolicy.perWorkspace must be single or multiple' })) },
  { additionalProperties: false },
);
const Nullable = <T extends TSchema>(s: T, rule: string) => Type.Unsafe<Static<T> | null>({ anyOf: [s, { type: 'null' }], [RULE]: rule });

export const PublishBody = Type.Object(
  {
    sourceAgentVersion: Type.Optional(Type.Integer({ minimum: 1, [RULE]: 'sourceAgentVersion must be a positive integer' })),
    changelog: Type.Optional(Text('changelog', TEMPLATE_LIMITS.changelog)),
    envContract: Type.Optional(EnvContract),
    declaredTriggers: Type.Optional(Type.Array(DeclaredTrigger, { maxItems: TEMPLATE_LIMITS.declaredTriggers, [RULE]: { maxItems: `declaredTriggers may hold at most ${TEMPLATE_LIMITS.declaredTriggers} triggers` } })),
    marketplaceSkills: Type.Optional(Type.Array(MarketplaceSkill, { maxItems: TEMPLATE_LIMITS.marketplaceSkills, [RULE]: { maxItems: `marketplaceSkills may hold at most ${TEMPLATE_LIMITS.marketplaceSkills} skills` } })),
    connections: Type.Optional(Nullable(Type.Array(Connection, { maxItems: TEMPLATE_LIMITS.connections }), `connections must be null or an array of at most ${TEMPLATE_LIMITS.connections} {key, type, required}`)),
    triggerPresets: Type.Optional(AnyJson),
    personaTemplate: Type.Optional(AnyJson),
    paramsMeta: Type.Optional(AnyJson),
    onInstall: Type.Optional(AnyJson),
    onUninstall: Type.Optional(AnyJson),
    installPolicy: Type.Optional(Nullable(InstallPolicy, 'installPolicy must be null or {perWorkspace: single or multiple}')),
    outcomes: Type.Optional(AnyJson),
    channels: Type.Optional(AnyJson),
    features: Type.Optional(AnyJson),
    referenceEvalRunId: Type.Optional(ID('referenceEvalRunId')),
    skipAutoApply: Type.Optional(Type.Boolean({ [RULE]: 'skipAutoApply must be a boolean' })),
  },
  { additionalProperties: false },
);
export type PublishBody = Static<typeof PublishBody>;

export const DraftBody = Type.Object(
  {
    force: Type.Optional(Type.Boolean({ [RULE]: 'force must be a boolean' })),
    aiAssist: Type.Optional(Type.Boolean({ [RULE]: 'aiAssist must be a boolean' })),
    sourceAgentVersion: Type.Optional(Type.Integer({ minimum: 1, [RULE]: 'sourceAgentVersion must be a positive integer' })),
  },
  { additionalProperties: false },
);
export type DraftBody = Static<typeof DraftBody>;

export const PatchBody = Type.Object(
  { displayName: Type.Optional(Text('displayName', TEMPLATE_LIMITS.displayName, 1)), description: Type.Optional(Text('description', TEMPLATE_LIMITS.description)) },
  { additionalProperties: false },
);
export type PatchBody = Static<typeof PatchBody>;

export const VisibilityBody = Type.Object({ visibility: Visibility }, { additionalProperties: false });
export type VisibilityBody = Static<typeof VisibilityBody>;

export const DeprecateBody = Type.Object({ reason: Type.Optional(Text('reason', TEMPLATE_LIMITS.reason)) }, { additionalProperties: false });
export type DeprecateBody = Static<typeof DeprecateBody>;

export const OwnerBody = Type.Object({ newOrgId: ID('newOrgId') }, { additionalProperties: false });
export type OwnerBody = Static<typeof OwnerBody>;

export const TemplateParams = Type.Object({ templateId: Type.String({ pattern: TEMPLATE_ID, [RULE]: 'templateId must be tpl_ followed by letters and digits' }) });
export type TemplateParams = Static<typeof TemplateParams>;
export const VersionParams = Type.Object({
  templateId: TemplateParams.properties.templateId,
  version: Type.String({ pattern: '^(?=\\d{1,9}$)0*[1-9]\\d*$', [RULE]: 'version must be a positive integer' }),
});
export type VersionParams = Static<typeof VersionParams>;

const Page = Type.String({
  pattern: '^(?=\\d{1,7}$)0*[1-9]\\d*$', default: '1', description: `An integer from 1 to ${TEMPLATE_LIMITS.page}, default 1`,
  [RULE]: `page must be an integer from 1 to ${TEMPLATE_LIMITS.page}`,
});
const Flag = (name: string) => Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], [RULE]: `${name} must be true or false` });

export const CatalogQuery = Type.Object(
  { page: Type.Optional(Page), limit: Type.Optional(LimitParam({ fallback: TEMPLATE_LIMITS.listDefault, max: TEMPLATE_LIMITS.listMax })), firstParty: Type.Optional(Flag('firstParty')) },
  { additionalProperties: false },
);
export type CatalogQuery = Static<typeof CatalogQuery>;

export const VersionsQuery = Type.Object(
  { page: Type.Optional(Page), limit: Type.Optional(LimitParam({ fallback: TEMPLATE_LIMITS.listDefault, max: TEMPLATE_LIMITS.listMax })) },
  { additionalProperties: false },
);
export type VersionsQuery = Static<typeof VersionsQuery>;

export const ManifestQuery = Type.Object(
  { agentId: Type.Optional(ID('agentId')), orgId: Type.Optional(ID('orgId')) },
  { additionalProperties: false },
);
export type ManifestQuery = Static<typeof ManifestQuery>;

// ---- answers ------------------------------------------------------------------------------

const Opt = <T extends TSchema>(s: T) => Type.Optional(s);
const Open = Type.Unknown();

export const TemplateOut = Type.Object(
  {
    id: Type.String(), name: Type.String(), displayName: Type.String(), description: Type.String(), creatorId: Type.String(), creatorOrgId: Type.String(),
    sourceAgentId: Opt(Type.String()), sourceBaseAgentId: Opt(Type.String()), visibility: Type.String(), listed: Type.Boolean(),
    latestVersion: Type.Integer(), latestApprovedVersion: Opt(Type.Integer()), installCount: Type.Integer(), activeInstallCount: Opt(Type.Integer()),
    firstParty: Type.Boolean(), createdAt: Type.String(), updatedAt: Type.String(),
  },
  { additionalProperties: false, description: 'An agent template (spec 03 part 2.5)' },
);
export type TemplateOut = Static<typeof TemplateOut>;

export const VersionOut = Type.Object(
  {
    id: Type.String(), templateId: Type.String(), version: Type.Integer(), content: Open, envContract: Opt(Open), changelog: Opt(Type.String()),
    sourceAgentVersion: Opt(Type.Integer()), createdBy: Type.String(), createdAt: Type.String(), contentHash: Type.String(),
    approvalStatus: Type.String(), approvalNotes: Opt(Type.String()),
    connections: Opt(Open), personaTemplate: Opt(Open), triggerPresets: Opt(Open), paramsMeta: Opt(Open), onInstall: Opt(Open), onUninstall: Opt(Open), installPolicy: Opt(Open),
    deprecated: Type.Boolean(), deprecatedReason: Opt(Type.String()), warnings: Opt(Type.Array(Type.String())),
  },
  { additionalProperties: false, description: 'A template version (spec 03 part 2.5)' },
);
export type VersionOut = Static<typeof VersionOut>;

const Reconciliation = Type.Object(
  { key: Type.String(), status: Type.String(), candidates: Type.Array(Open) },
  { additionalProperties: false },
);

export const ManifestOut = Type.Object(
  {
    id: Type.String(), name: Type.String(), displayName: Type.String(), description: Type.String(), version: Type.Integer(), latestVersion: Type.Integer(),
    visibility: Type.String(), contentHash: Type.String(), agent: Type.Object({ model: Opt(Type.String()) }, { additionalProperties: false }),
    skills: Type.Array(Open), connections: Type.Array(Open), triggers: Type.Array(Open), params: Type.Array(Open),
    personaTemplate: Opt(Open), channels: Opt(Open), features: Opt(Open), onInstall: Opt(Open), onUninstall: Opt(Open), installPolicy: Opt(Open),
    latestApprovedVersion: Opt(Type.Integer()), installable: Type.Boolean(), deprecated: Type.Boolean(), reconciliation: Type.Array(Reconciliation),
  },
  { additionalProperties: false, description: 'A template manifest (spec 03 part 2.5); contentHash is the install seal' },
);
export type ManifestOut = Static<typeof ManifestOut>;

export const DraftOut = Type.Object(
  { templateId: Type.String(), draft: Open, diff: Open, warnings: Opt(Type.Array(Type.String())) },
  { additionalProperties: false },
);

export const ReviewOut = Type.Object(
  {
    templateId: Type.String(), visibility: Type.String(), latestApprovedVersion: Opt(Type.Integer()),
    versions: Type.Array(Type.Object(
      { version: Type.Integer(), approvalStatus: Type.String(), approvalNotes: Opt(Type.String()), approvedBy: Opt(Type.String()), approvedAt: Opt(Type.String()) },
      { additionalProperties: false },
    )),
  },
  { additionalProperties: false, description: 'A template\'s review state, versions newest first (spec 03 part 4.4)' },
);
export type ReviewOut = Static<typeof ReviewOut>;

export const Answers = {
  template: TemplateOut,
  version: Type.Object({ ...VersionOut.properties, autoApplyRunId: Opt(Type.String()), autoApplyTargetCount: Opt(Type.Integer()) }, { additionalProperties: false }),
  versions: Type.Object({ versions: Type.Array(VersionOut), total: Type.Integer() }, { additionalProperties: false }),
  catalog: Type.Object({ templates: Type.Array(TemplateOut), total: Type.Integer() }, { additionalProperties: false }),
  manifest: ManifestOut,
  draft: DraftOut,
  plainVersion: VersionOut,
  review: ReviewOut,
};
