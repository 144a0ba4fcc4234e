/** The marketplace skill routes' request and response schemas (TypeBox; enforced by the kernel, answers serialised through them). */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { RULE } from '../../api/kernel/schema.js';
import { LimitParam } from '../../api/kernel/schema-types.js';

/** Bounds on what a skill body may hold (spec 03 part 8 names only the search limit). */
export const SKILL_LIMITS = {
  displayName: 120, description: 2000, longDescription: 20_000, category: 64, tag: 40, tags: 20, url: 2048, screenshots: 10,
  version: 64, changelog: 10_000, envVars: 50, envValue: 4096, search: 200, name: 200, page: 9_999_999,
} as const;

const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
const ID = (name: string) => Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', [RULE]: `${name} must be 1-128 letters, digits, _ or -` });
const Url = (name: string) => Type.String({ minLength: 1, maxLength: SKILL_LIMITS.url, pattern: '^https?://[^\\s]+$', [RULE]: `${name} must be an http(s) URL of at most ${SKILL_LIMITS.url} characters` });
const Text = (name: string, max: number, min = 0) => Type.String({ minLength: min, maxLength: max, [RULE]: `${name} must be ${min > 0 ? `${min}-` : 'at most '}${max} characters` });
const Tags = Type.Array(Text('tags[]', SKILL_LIMITS.tag, 1), { maxItems: SKILL_LIMITS.tags, [RULE]: { maxItems: `tags may hold at most ${SKILL_LIMITS.tags} tags` } });
const Screenshots = Type.Array(Url('screenshots[]'), { maxItems: SKILL_LIMITS.screenshots, [RULE]: { maxItems: `screenshots may hold at most ${SKILL_LIMITS.screenshots} URLs` } });
const Visibility = Type.Unsafe<'public' | 'private'>({ type: 'string', enum: ['public', 'private'], [RULE]: 'visibility must be public or private' });

/** The fields a listing and a PATCH share (spec 03 part 4.5). */
const editable = {
  displayName: Text('displayName', SKILL_LIMITS.displayName, 1),
  category: Text('category', SKILL_LIMITS.category, 1),
  tags: Tags,
  longDescription: Text('longDescription', SKILL_LIMITS.longDescription),
  iconUrl: Url('iconUrl'),
  screenshots: Screenshots,
  repositoryUrl: Url('repositoryUrl'),
  documentationUrl: Url('documentationUrl'),
};

export const ListBody = Type.Object(
  {
    sourceSkillId: ID('sourceSkillId'),
    displayName: editable.displayName,
    category: Type.Optional(editable.category),
    tags: Type.Optional(editable.tags),
    longDescription: Type.Optional(editable.longDescription),
    iconUrl: Type.Optional(editable.iconUrl),
    screenshots: Type.Optional(editable.screenshots),
    repositoryUrl: Type.Optional(editable.repositoryUrl),
    documentationUrl: Type.Optional(editable.documentationUrl),
    visibility: Type.Optional(Visibility),
  },
  { additionalProperties: false },
);
export type ListBody = Static<typeof ListBody>;

export const PatchBody = Type.Object(
  {
    displayName: Type.Optional(editable.displayName),
    description: Type.Optional(Text('description', SKILL_LIMITS.description)),
    longDescription: Type.Optional(editable.longDescription),
    category: Type.Optional(editable.category),
    tags: Type.Optional(editable.tags),
    iconUrl: Type.Optional(editable.iconUrl),
    screenshots: Type.Optional(editable.screenshots),
    repositoryUrl: Type.Optional(editable.repositoryUrl),
    documentationUrl: Type.Optional(editable.documentationUrl),
  },
  { additionalProperties: false },
);
export type PatchBody = Static<typeof PatchBody>;

const EnvVarMeta = Type.Object(
  { description: Text('envVarsMetadata description', 500), required: Type.Boolean(), example: Type.Optional(Text('envVarsMetadata example', 500)) },
  { additionalProperties: false },
);
const VersionText = Type.String({ minLength: 1, maxLength: SKILL_LIMITS.version, [RULE]: `version must be a semantic version of at most ${SKILL_LIMITS.version} characters` });

export const PublishBody = Type.Object(
  {
    version: VersionText,
    changelog: Type.Optional(Text('changelog', SKILL_LIMITS.changelog)),
    envVarsMetadata: Type.Optional(Type.Record(Type.String({ pattern: ENV_NAME }), EnvVarMeta, {
      additionalProperties: false, maxProperties: SKILL_LIMITS.envVars,
      [RULE]: { maxProperties: `envVarsMetadata may name at most ${SKILL_LIMITS.envVars} variables`, additionalProperties: 'envVarsMetadata names must be letters, digits and _, not starting with a digit' },
    })),
  },
  { additionalProperties: false },
);
export type PublishBody = Static<typeof PublishBody>;

export const UnpublishBody = Type.Object({ version: VersionText }, { additionalProperties: false });
export type UnpublishBody = Static<typeof UnpublishBody>;

export const OwnerBody = Type.Object({ newOrgId: ID('newOrgId') }, { additionalProperties: false });
export type OwnerBody = Static<typeof OwnerBody>;

export const InstallBody = Type.Object(
  {
    version: Type.Optional(VersionText),
    envValues: Type.Optional(Type.Record(Type.String({ pattern: ENV_NAME }), Type.String({ maxLength: SKILL_LIMITS.envValue }), {
      additionalProperties: false, maxProperties: SKILL_LIMITS.envVars,
      [RULE]: { maxProperties: `envValues may hold at most ${SKILL_LIMITS.envVars} values`, additionalProperties: 'envValues names must be letters, digits and _, not starting with a digit', type: 'envValues must be an object of strings', '*': `envValues must map variable names to strings of at most ${SKILL_LIMITS.envValue} characters` },
    })),
  },
  { additionalProperties: false },
);
export type InstallBody = Static<typeof InstallBody>;

export const InstallHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$', [RULE]: 'Idempotency-Key must be 1-128 printable characters' })),
});
export type InstallHeaders = Static<typeof InstallHeaders>;

export const SkillParams = Type.Object({ id: ID('id') });
export type SkillParams = Static<typeof SkillParams>;
export const VersionParams = Type.Object({ id: ID('id'), versionId: ID('versionId') });
export type VersionParams = Static<typeof VersionParams>;
export const OrgParams = Type.Object({ orgId: ID('orgId') });
export type OrgParams = Static<typeof OrgParams>;
export const AgentParams = Type.Object({ agentId: Type.String() });
export type AgentParams = Static<typeof AgentParams>;
export const InstallParams = Type.Object({ id: ID('id'), agentId: Type.String() });
export type InstallParams = Static<typeof InstallParams>;

const Flag = (name: string) => Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], [RULE]: `${name} must be true or false` });

export const SearchQuery = Type.Object({
  listed: Type.Optional(Flag('listed')),
  verified: Type.Optional(Flag('verified')),
  featured: Type.Optional(Flag('featured')),
  hasPublishedVersion: Type.Optional(Flag('hasPublishedVersion')),
  category: Type.Optional(Text('category', SKILL_LIMITS.category, 1)),
  // No control characters: the searched text joins its fields with one (skills/001 skills_search_text).
  search: Type.Optional(Type.String({
    minLength: 1, maxLength: SKILL_LIMITS.search, pattern: '^[^\\u0000-\\u001f\\u007f]*$',
    [RULE]: `search must be 1-${SKILL_LIMITS.search} characters without control characters`,
  })),
  name: Type.Optional(Text('name', SKILL_LIMITS.name, 1)),
  creatorId: Type.Optional(Text('creatorId', 128, 1)),
  page: Type.Optional(Type.String({
    pattern: `^(?=\\d{1,7}$)0*[1-9]\\d*$`, default: '1', description: `An integer from 1 to ${SKILL_LIMITS.page}, default 1`,
    [RULE]: `page must be an integer from 1 to ${SKILL_LIMITS.page}`,
  })),
  limit: Type.Optional(LimitParam({ fallback: 10, max: 100 })),
});
export type SearchQuery = Static<typeof SearchQuery>;

export const VersionsQuery = Type.Object({ includeUnapproved: Type.Optional(Flag('includeUnapproved')) });
export type VersionsQuery = Static<typeof VersionsQuery>;

// ---- answers ------------------------------------------------------------------------------

const Opt = <T extends TSchema>(s: T) => Type.Optional(s);

export const VersionOut = Type.Object(
  {
    id: Type.String(), marketplaceSkillId: Type.String(), version: Type.String(), description: Type.String(),
    changelog: Opt(Type.String()),
    envVarsMetadata: Opt(Type.Record(Type.String(), Type.Object({ description: Type.String(), required: Type.Boolean(), example: Opt(Type.String()) }, { additionalProperties: false }))),
    approvalStatus: Type.String(), published: Type.Boolean(), approvedAt: Opt(Type.String()),
    createdBy: Type.String(), createdAt: Type.String(),
  },
  { additionalProperties: false, description: 'A marketplace skill version (spec 03 part 2.6)' },
);
export type VersionOut = Static<typeof VersionOut>;

export const SkillOut = Type.Object(
  {
    id: Type.String(), name: Type.String(), displayName: Type.String(), description: Type.String(),
    longDescription: Opt(Type.String()), category: Opt(Type.String()), tags: Type.Array(Type.String()),
    creatorId: Type.String(), creatorOrgId: Opt(Type.String()), ownershipStatus: Type.String(), sourceSkillId: Type.String(),
    listed: Type.Boolean(), visibility: Type.String(), verified: Type.Boolean(), featured: Type.Boolean(), published: Type.Boolean(),
    installCount: Type.Integer(), activeInstallCount: Type.Integer(),
    iconUrl: Opt(Type.String()), screenshots: Opt(Type.Array(Type.String())), repositoryUrl: Opt(Type.String()), documentationUrl: Opt(Type.String()),
    listedAt: Opt(Type.String()), createdAt: Type.String(), updatedAt: Type.String(),
    versions: Type.Array(VersionOut), versionsCount: Type.Integer(), pendingVersionsCount: Type.Integer(), approvedVersionsCount: Type.Integer(),
  },
  { additionalProperties: false, description: 'A marketplace skill (spec 03 part 2.6)' },
);
export type SkillOut = Static<typeof SkillOut>;

const Pagination = Type.Object(
  {
    page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), totalPages: Type.Integer(),
    currentPage: Type.Integer(), totalCount: Type.Integer(), hasNextPage: Type.Boolean(), hasPrevPage: Type.Boolean(),
    nextPage: Type.Unsafe<number | null>({ type: ['integer', 'null'] }), prevPage: Type.Unsafe<number | null>({ type: ['integer', 'null'] }),
    totalCountExact: Type.Boolean(),
  },
  { additionalProperties: false, description: 'Spec 01 part 2.5 page-numbered fields, and page, limit, total, totalPages (contract skills)' },
);

export const InstalledOut = Type.Object(
  { marketplaceSkillId: Type.String(), agentId: Type.String(), version: Type.String(), installedAt: Type.String() },
  { additionalProperties: false, description: 'A skill installed on an agent; env values are never returned' },
);
export type InstalledOut = Static<typeof InstalledOut>;

export const Answers = {
  skill: SkillOut,
  skills: Type.Array(SkillOut),
  version: VersionOut,
  versions: Type.Array(VersionOut),
  search: Type.Object({ data: Type.Array(SkillOut), pagination: Pagination }, { additionalProperties: false }),
  unpublished: Type.Object({ success: Type.Boolean(), message: Type.String(), skillUnlisted: Type.Boolean(), versionId: Type.String() }, { additionalProperties: false }),
  unlisted: Type.Object({ success: Type.Boolean(), message: Type.String(), unlisted: Type.Boolean(), versionsUnpublished: Type.Integer() }, { additionalProperties: false }),
  installed: InstalledOut,
  installations: Type.Array(InstalledOut),
};
