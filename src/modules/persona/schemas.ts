/** The persona routes' request and response schemas (TypeBox; enforced by the kernel, answers serialised through them). */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { RULE } from '../../api/kernel/schema.js';
import { Nullable, OneOfStrings } from '../../api/kernel/schema-types.js';

/** Bounds on what a persona body may hold. */
export const PERSONA_LIMITS = { text: 100_000, item: 2000, items: 100, short: 500, url: 2048 } as const;

const Short = (extra: Record<string, unknown> = {}) => Type.String({ maxLength: PERSONA_LIMITS.short, ...extra });
const Items = Type.Array(Type.String({ maxLength: PERSONA_LIMITS.item }), { maxItems: PERSONA_LIMITS.items });

const PERSONA_RULE = 'persona must be a string or an object {base?, voice?, text?} of strings';
const PersonaParts = Type.Object(
  {
    base: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.text })),
    voice: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.text })),
    text: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.text })),
  },
  { additionalProperties: false },
);
/** A persona in a request: a string, or the channel-aware object form; anything else (null, a number, an array) is refused. */
export const PersonaIn = (rule = PERSONA_RULE) =>
  Type.Union([Type.String({ maxLength: PERSONA_LIMITS.text, [RULE]: rule }), Type.Object(PersonaParts.properties, { additionalProperties: false, [RULE]: rule })]);
/**
 * A persona in an answer: a string or the object form, as a type pair (the serializer tells them
 * apart by the value's type, where a union would have it validate each value against each branch).
 */
export const PersonaOut = Type.Unsafe<string | Static<typeof PersonaParts>>({ ...PersonaParts, type: ['string', 'object'] });

const VoiceChip = Type.Object({ title: Short(), isEnabled: Type.Boolean() }, { additionalProperties: false });

/** The configuration fields of a draft body (contract P12), also the shape of every `config` answered. */
const configFields = {
  agentName: Type.Optional(Short()),
  businessWebsite: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.url })),
  presetId: Type.Optional(Short()),
  voiceChips: Type.Optional(Type.Array(VoiceChip, { maxItems: PERSONA_LIMITS.items })),
  roleAndPurpose: Type.Optional(Items),
  contextAndAudience: Type.Optional(Items),
  personalityAndVoice: Type.Optional(Items),
  rulesAndBoundaries: Type.Optional(Items),
  aboutProductsOrServices: Type.Optional(Items),
  hasRoleAndPurpose: Type.Optional(Type.Boolean()),
  hasContextAndAudience: Type.Optional(Type.Boolean()),
  hasPersonalityAndVoice: Type.Optional(Type.Boolean()),
  hasRulesAndBoundaries: Type.Optional(Type.Boolean()),
  hasBusinessInfo: Type.Optional(Type.Boolean()),
  businessType: Type.Optional(Short()),
};
export const CONFIG_FIELDS = Object.keys(configFields) as (keyof typeof configFields)[];
export const Config = Type.Object(configFields, { additionalProperties: false });
export type ConfigBody = Static<typeof Config>;

export const AgentParams = Type.Object({ agentId: Type.String() });
export type AgentParams = Static<typeof AgentParams>;
export const VersionParams = Type.Object({
  agentId: Type.String(),
  version: Type.Integer({ minimum: 1, maximum: 2_147_483_647, [RULE]: 'version must be a positive integer' }),
});
export type VersionParams = Static<typeof VersionParams>;
export const PresetParams = Type.Object({ presetId: Type.String({ minLength: 1, maxLength: 128 }) });
export type PresetParams = Static<typeof PresetParams>;

export const VersionsQuery = Type.Object(
  { status: Type.Optional(Type.Unsafe<'draft' | 'published' | 'all'>({ type: 'string', enum: ['draft', 'published', 'all'], default: 'all', [RULE]: 'status must be one of draft, published, all' })) },
  { additionalProperties: false },
);
export type VersionsQuery = Static<typeof VersionsQuery>;

export const CreateVersionBody = Type.Object({ persona: PersonaIn() }, { additionalProperties: false });
export type CreateVersionBody = Static<typeof CreateVersionBody>;

export const GenerateBody = Type.Object(
  {
    businessType: Type.Optional(Short()),
    businessWebsite: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.url })),
    agentName: Type.Optional(Short()),
    /** Deprecated (spec 03 part 4.1). */
    brandPersonality: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.item })),
    /** Deprecated (spec 03 part 4.1). */
    brandTraits: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.item })),
  },
  { additionalProperties: false },
);
export type GenerateBody = Static<typeof GenerateBody>;

export const DraftBody = Type.Object(
  {
    ...configFields,
    persona: Type.Optional(PersonaIn()),
    brandPersonality: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.item })),
    brandTraits: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.item })),
  },
  { additionalProperties: false },
);
export type DraftBody = Static<typeof DraftBody>;

export const PublishBody = Type.Object({ version: Type.Integer({ minimum: 1, maximum: 2_147_483_647, [RULE]: 'version must be a positive integer' }) }, { additionalProperties: false });
export type PublishBody = Static<typeof PublishBody>;

export const PresetApplyBody = Type.Object({ presetId: Type.String({ minLength: 1, maxLength: 128, [RULE]: 'presetId must be a non-empty string' }) }, { additionalProperties: false });
export type PresetApplyBody = Static<typeof PresetApplyBody>;

const current = {
  currentPersona: Type.Optional(PersonaIn('currentPersona must be a string or an object {base?, voice?, text?} of strings')),
  currentConfig: Type.Optional(Config),
};
export const WEBSITE_URL_RULE = 'websiteUrl must be an absolute http: or https: URL';
export const EnhanceWebsiteBody = Type.Object(
  { websiteUrl: Type.String({ maxLength: PERSONA_LIMITS.url, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+([/?#]\\S*)?$', [RULE]: WEBSITE_URL_RULE }), ...current },
  { additionalProperties: false },
);
export type EnhanceWebsiteBody = Static<typeof EnhanceWebsiteBody>;
export const EnhanceStorytellingBody = Type.Object(current, { additionalProperties: false });
export type EnhanceStorytellingBody = Static<typeof EnhanceStorytellingBody>;
const Example = Type.Object(
  { agentReply: Type.String({ maxLength: PERSONA_LIMITS.item }), reason: Type.String({ maxLength: PERSONA_LIMITS.item }), expectedReply: Type.String({ maxLength: PERSONA_LIMITS.item }) },
  { additionalProperties: false },
);
export const EnhanceInstructionsBody = Type.Object(
  { instructions: Type.Optional(Type.String({ maxLength: PERSONA_LIMITS.text })), examples: Type.Optional(Type.Array(Example, { maxItems: PERSONA_LIMITS.items })), ...current },
  { additionalProperties: false },
);
export type EnhanceInstructionsBody = Static<typeof EnhanceInstructionsBody>;

// Answers.
const VersionStatus = OneOfStrings(['draft', 'published']);
const listed = {
  version: Type.Integer(),
  createdDate: Type.Number({ description: 'Unix ms' }),
  createdBy: Type.String(),
  isCurrent: Type.Boolean(),
  versionStatus: VersionStatus,
  persona: PersonaOut,
};
export const VersionListItem = Type.Object(listed, { additionalProperties: false });
export const VersionFull = Type.Object(
  {
    ...listed,
    id: Type.String(),
    _id: Type.String(),
    __v: Type.Integer(),
    agentId: Type.String(),
    config: Config,
    createdAt: Type.String({ format: 'date-time' }),
    agentVersion: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

const ok = <T extends Record<string, TSchema>>(props: T) => Type.Object({ status: Type.String(), ...props }, { additionalProperties: false });
export const Answers = {
  versions: ok({ message: Type.String(), versions: Type.Array(VersionListItem) }),
  version: ok({ message: Type.String(), version: VersionFull }),
  versionNumber: ok({ message: Type.String(), version: Type.Integer() }),
  generated: ok({ message: Type.String(), persona: PersonaOut, version: Type.Integer() }),
  draft: ok({ message: Type.String(), version: Type.Integer(), versionStatus: VersionStatus, persona: PersonaOut, config: Config }),
  published: ok({ message: Type.String(), version: Type.Integer(), persona: PersonaOut, versionStatus: VersionStatus }),
  message: ok({ message: Type.String() }),
  presets: ok({ presets: Type.Array(Type.Object({ id: Type.String(), title: Type.String(), description: Type.String() }, { additionalProperties: false })) }),
  preset: ok({ preset: Type.Object({ id: Type.String(), title: Type.String(), description: Type.String(), config: Config }, { additionalProperties: false }) }),
  config: ok({ message: Type.String(), config: Config }),
  suggestion: Type.Object({ suggestedPersona: PersonaOut, suggestedConfig: Config }, { additionalProperties: false }),
};
