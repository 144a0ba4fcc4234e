/**
 * Request and response schemas of the voice routes (spec 02 parts 2.4, 4.4;
 * contract telephony T3, T6). What one field's schema cannot say (the
 * semantic version, a model form's fields per `kind`, `minDelay` against
 * `maxDelay`, the pronunciations' total, the bundle's encoding) is checked in
 * rules.ts.
 */
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { RULE } from '../../../api/kernel/schema.js';
import { errors } from '../schemas.js';

export const NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
export const NAME_RULE = 'name must be 1 to 64 letters, digits, _ or -';
export const LIMITS = {
  description: 500, greeting: 1000, short: 100, nameLength: 64,
  pronunciationKey: 256, pronunciationValue: 1024, pronunciationsBytes: 32 * 1024,
  bundleChars: 10 * 1024 * 1024, versionChars: 100,
} as const;
/** The version and provision-from-config routes read bodies up to 16 MiB (contract telephony T3.2). */
export const VERSION_BODY_LIMIT = 16 * 1024 * 1024;

const bounded = (field: string, max: number) => Type.String({ maxLength: max, [RULE]: `${field} must be a string of at most ${max.toLocaleString('en-US')} characters` });
/** One of `values`, failing with `rule` (a union of literals would fail with each literal's words). */
const oneOf = <T extends string>(values: readonly T[], rule: string) => Type.Unsafe<T>({ type: 'string', enum: [...values], [RULE]: rule });
const flag = (field: string) => Type.Boolean({ [RULE]: `${field} must be a boolean` });
const anyObject = (field: string, description: string) =>
  Type.Record(Type.String(), Type.Unknown(), { [RULE]: `${field} must be an object`, description });

/** One model of the pipeline: `kind` decides which other fields it needs (rules.ts). */
const Model = (field: string, withVoice: boolean) =>
  Type.Object(
    {
      kind: oneOf(['inference', 'plugin', 'realtime'] as const, `${field}.kind must be one of inference, plugin, realtime`),
      model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, [RULE]: `${field}.model must be a non-empty string of at most 200 characters` })),
      provider: Type.Optional(Type.String({ maxLength: 64, [RULE]: `${field}.provider must be a string` })),
      class: Type.Optional(Type.String({ maxLength: 16, [RULE]: `${field}.class must be a string` })),
      options: Type.Optional(anyObject(`${field}.options`, 'Passed to the model as given')),
      ...(withVoice ? { voice: Type.Optional(Type.String({ minLength: 1, maxLength: 200, [RULE]: `${field}.voice must be a non-empty string of at most 200 characters` })) } : {}),
    },
    {
      additionalProperties: false,
      [RULE]: { type: `${field} must be an object`, additionalProperties: '{path} is not a known field' },
      description: '`{kind: inference, model, options?}`, `{kind: plugin, provider (speech-a, speech-b), class (LLM, STT, STTv2, TTS), options}` or `{kind: realtime, provider (model-a, model-b, model-c), options}`',
    },
  );

/** Every configuration field of a version (spec 02 part 4.4's table), `version` and `description` aside. */
const configFields = {
  llm: Model('llm', false),
  stt: Type.Optional(Model('stt', false)),
  tts: Type.Optional(Model('tts', true)),
  vad: Type.Optional(bounded('vad', LIMITS.short)),
  vadOptions: Type.Optional(anyObject('vadOptions', '`{minSpeechDuration?, minSilenceDuration?, prefixPaddingDuration?, activationThreshold?}`; stored, not validated')),
  turnDetection: Type.Optional(bounded('turnDetection', LIMITS.short)),
  greeting: Type.Optional(bounded('greeting', LIMITS.greeting)),
  maxToolSteps: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, [RULE]: 'maxToolSteps must be an integer from 0 to 1000' })),
  userAwayTimeout: Type.Optional(Type.Number({ minimum: 0, [RULE]: 'userAwayTimeout must be a non-negative number of seconds' })),
  preemptiveGeneration: Type.Optional(flag('preemptiveGeneration')),
  interruption: Type.Optional(Type.Object(
    {
      enabled: Type.Optional(flag('interruption.enabled')),
      mode: Type.Optional(oneOf(['adaptive', 'vad'] as const, 'interruption.mode must be adaptive or vad')),
      falseInterruptionTimeout: Type.Optional(Type.Number({ minimum: 0, [RULE]: 'interruption.falseInterruptionTimeout must be a non-negative number' })),
      resumeFalseInterruption: Type.Optional(flag('interruption.resumeFalseInterruption')),
      minDelay: Type.Optional(Type.Number({ minimum: 0, [RULE]: 'interruption.minDelay must be a non-negative number' })),
      maxDelay: Type.Optional(Type.Number({ minimum: 0, [RULE]: 'interruption.maxDelay must be a non-negative number' })),
    },
    { additionalProperties: false, [RULE]: { type: 'interruption must be an object', additionalProperties: '{path} is not a known field' } },
  )),
  sttLanguage: Type.Optional(bounded('sttLanguage', LIMITS.short)),
  hasInterruption: Type.Optional(flag('hasInterruption')),
  hasOnEnter: Type.Optional(flag('hasOnEnter')),
  hasOnUserTurnCompleted: Type.Optional(flag('hasOnUserTurnCompleted')),
  hasOnExit: Type.Optional(flag('hasOnExit')),
  hasTools: Type.Optional(flag('hasTools')),
  krispEnabled: Type.Optional(flag('krispEnabled')),
  persistTranscript: Type.Optional(flag('persistTranscript')),
  backgroundAudio: Type.Optional(anyObject('backgroundAudio', '`{ambient?, thinking?}`: clip name, audio config object, or array for a probabilistic mix; not validated')),
  volume: Type.Optional(Type.Number({ minimum: 0, maximum: 100, [RULE]: 'volume must be a number from 0 to 100' })),
  pronunciations: Type.Optional(Type.Record(Type.String(), Type.String({ [RULE]: 'pronunciations must be an object of strings' }), { [RULE]: 'pronunciations must be an object of strings' })),
  excludeTools: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200, [RULE]: 'excludeTools must be an array of at most 200 tool names' }), { maxItems: 200, [RULE]: 'excludeTools must be an array of at most 200 tool names' })),
  bundle: Type.Optional(Type.String({ [RULE]: 'bundle must be a string' })),
} satisfies TProperties;

/** The configuration field names, in the table's order. */
export const CONFIG_FIELDS = Object.keys(configFields).filter((k) => k !== 'bundle') as (keyof typeof configFields)[];

const strict = <T extends TProperties>(props: T): TObject<T> =>
  Type.Object(props, { additionalProperties: false, [RULE]: { type: 'body must be an object', additionalProperties: '{path} is not a known field' } });

export const VersionBody = strict({
  version: Type.String({ [RULE]: 'version must be a string' }),
  description: Type.Optional(bounded('description', LIMITS.description)),
  ...configFields,
});
export type VersionBody = Static<typeof VersionBody>;

export const ProvisionBody = strict({
  name: Type.Optional(Type.String({ pattern: NAME_PATTERN, [RULE]: NAME_RULE })),
  msisdn: Type.Optional(Type.String({ pattern: '^\\+?[0-9]{1,15}$', [RULE]: 'msisdn must be E.164 digits, with or without +' })),
  description: Type.Optional(bounded('description', LIMITS.description)),
  ...configFields,
});
export type ProvisionBody = Static<typeof ProvisionBody>;

export const CreateBody = strict({
  name: Type.String({ pattern: NAME_PATTERN, [RULE]: NAME_RULE }),
  description: Type.Optional(bounded('description', LIMITS.description)),
});
export type CreateBody = Static<typeof CreateBody>;

export const UpdateBody = strict({
  name: Type.Optional(Type.String({ pattern: NAME_PATTERN, [RULE]: NAME_RULE })),
  description: Type.Optional(bounded('description', LIMITS.description)),
  active: Type.Optional(flag('active')),
});
export type UpdateBody = Static<typeof UpdateBody>;

/** What the answers carry of a version's configuration: every field sent, as sent. */
const ConfigOut = Type.Object({
  ...Object.fromEntries(Object.keys(configFields).map((k) => [k, Type.Optional(Type.Unknown())])),
});
const stamps = { createdAt: Type.String({ format: 'date-time' }), updatedAt: Type.String({ format: 'date-time' }) };

const VoiceRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  agentId: Type.String(),
  active: Type.Boolean(),
  source: Type.String({ description: '`cli` for every voice created through the API' }),
  activeVersionId: Type.Union([Type.String(), Type.Null()], { description: 'The published version string; null before any publish' }),
  createdBy: Type.String(),
  ...stamps,
});

export const VersionRecord = Type.Composite([
  Type.Object({ id: Type.String(), version: Type.String(), description: Type.Optional(Type.String()), createdBy: Type.String(), ...stamps }),
  ConfigOut,
]);

const VoiceVersion = Type.Composite([
  Type.Object({ id: Type.String(), version: Type.String(), description: Type.Optional(Type.String()), active: Type.Boolean({ description: 'Whether this is the published version' }), createdAt: Type.String(), createdBy: Type.String() }),
  ConfigOut,
]);

const Voice = Type.Composite([VoiceRecord, Type.Object({ versions: Type.Array(VoiceVersion) })], { description: 'Voice (spec 02 part 2.4)' });

const Listed = Type.Object({
  version: Type.String(),
  createdDate: Type.String({ format: 'date-time' }),
  createdBy: Type.String(),
  isCurrent: Type.Boolean(),
  createdByEmail: Type.Null(),
  createdByFullName: Type.Null(),
});

export const AgentParams = Type.Object({ agentId: Type.String() });
export const VoiceParams = Type.Object({ agentId: Type.String(), voiceId: Type.String() });
export const PublishParams = Type.Object({ agentId: Type.String(), voiceId: Type.String(), version: Type.String() });

const tags = ['telephony: voice'];
export const schemas = {
  list: { tags, summary: 'The agent\'s voices with every version and bundle', params: AgentParams, response: { 200: Type.Object({ voices: Type.Array(Voice) }), ...errors } },
  create: { tags, summary: 'Create a voice (name unique among the agent\'s active voices)', params: AgentParams, body: CreateBody, response: { 201: VoiceRecord, ...errors } },
  pushVersion: { tags, summary: 'Push a version (not running until published)', params: VoiceParams, body: VersionBody, response: { 201: VersionRecord, ...errors } },
  versions: { tags, summary: 'The voice\'s versions, newest first', params: VoiceParams, response: { 200: Type.Object({ versions: Type.Array(Listed), activeVersionId: Type.Union([Type.String(), Type.Null()]) }), ...errors } },
  publish: {
    tags, summary: 'Publish a version (re-enables a deactivated voice)', params: PublishParams,
    response: { 200: Type.Object({ message: Type.String(), voiceId: Type.String(), activeVersionId: Type.String(), publishedAt: Type.String({ format: 'date-time' }) }), ...errors },
  },
  update: { tags, summary: 'Rename, describe, enable or disable a voice', params: VoiceParams, body: UpdateBody, response: { 200: VoiceRecord, ...errors } },
  deactivate: {
    tags, summary: 'Deactivate a voice (nothing is removed; its name becomes reusable)', params: VoiceParams,
    response: { 200: Type.Object({ message: Type.String(), deleted: Type.Literal(false), deactivated: Type.Literal(true) }), ...errors },
  },
  provision: {
    tags, summary: 'Create or reuse a voice by name, push the next patch version, publish it and bind it to a number', params: AgentParams, body: ProvisionBody,
    response: { 201: Type.Object({ voiceId: Type.String(), version: Type.String() }), ...errors },
  },
};
