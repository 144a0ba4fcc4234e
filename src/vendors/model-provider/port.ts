/**
 * The model-provider port: what the persona routes ask of a language model
 * (generate a persona, draft one from a structured configuration, suggest
 * changes), whichever provider answers. The embedded default is the
 * deterministic in-process sandbox (sandbox.ts); a real OpenAI-compatible
 * provider is chosen by configuration (openai.ts, selected in index.ts).
 *
 * Failures are values, never thrown: a refusal, an unreachable or slow
 * provider and an answer that cannot be used each come back as a
 * ModelProviderError the caller maps to its route's answer, and nothing is
 * stored for them.
 */

/** A persona as the API keeps it: a string, or the channel-aware object form. */
export type Persona = string | PersonaParts;
export interface PersonaParts {
  base?: string;
  voice?: string;
  text?: string;
}

export interface VoiceChip {
  title: string;
  isEnabled: boolean;
}

/** The structured configuration a draft is generated from (spec 03 part 4.1's draft body fields). */
export interface PersonaConfig {
  agentName?: string;
  businessWebsite?: string;
  presetId?: string;
  voiceChips?: VoiceChip[];
  roleAndPurpose?: string[];
  contextAndAudience?: string[];
  personalityAndVoice?: string[];
  rulesAndBoundaries?: string[];
  aboutProductsOrServices?: string[];
  hasRoleAndPurpose?: boolean;
  hasContextAndAudience?: boolean;
  hasPersonalityAndVoice?: boolean;
  hasRulesAndBoundaries?: boolean;
  hasBusinessInfo?: boolean;
  businessType?: string;
}

/** The sections of a configuration, each with the switch that includes or omits it. */
export const SECTIONS = [
  { field: 'roleAndPurpose', switch: 'hasRoleAndPurpose', title: 'Role and purpose' },
  { field: 'contextAndAudience', switch: 'hasContextAndAudience', title: 'Context and audience' },
  { field: 'personalityAndVoice', switch: 'hasPersonalityAndVoice', title: 'Personality and voice' },
  { field: 'rulesAndBoundaries', switch: 'hasRulesAndBoundaries', title: 'Rules and boundaries' },
  { field: 'aboutProductsOrServices', switch: 'hasBusinessInfo', title: 'About our products and services' },
] as const;

export type SectionField = (typeof SECTIONS)[number]['field'];

/** `POST persona`: business facts to write a persona from. */
export interface GenerateInput {
  agentName?: string | undefined;
  businessType?: string | undefined;
  businessWebsite?: string | undefined;
  brandPersonality?: string | undefined;
  brandTraits?: string | undefined;
}

export interface DraftInput {
  config: PersonaConfig;
  /** Existing persona text to extract a configuration from. */
  persona?: Persona | undefined;
}

export interface DraftOutput {
  persona: string;
  /** The draft's configuration: the body's fields as given, completed from `persona` when one was given. */
  config: PersonaConfig;
}

export interface InstructionExample {
  agentReply: string;
  reason: string;
  expectedReply: string;
}

export type EnhanceInput =
  | { kind: 'website'; websiteUrl: string; currentPersona: Persona | null; currentConfig: PersonaConfig; /** The page's text, fetched server-side when the provider reads websites. */ websiteText?: string | undefined }
  | { kind: 'storytelling'; currentPersona: Persona | null; currentConfig: PersonaConfig }
  | { kind: 'instructions'; currentPersona: Persona | null; currentConfig: PersonaConfig; instructions?: string | undefined; examples?: InstructionExample[] | undefined };

export interface Suggestion {
  suggestedPersona: Persona;
  suggestedConfig: PersonaConfig;
}

/** Spec 01 part 7.1's `424` reasons. */
export type RejectionReason = 'invalid_api_key' | 'forbidden' | 'model_not_found' | 'content_refused' | 'quota_exhausted' | 'bad_request';

export type ModelProviderError =
  /** The provider refused the request (its status, when it answered with one); a retry fails the same. */
  | { kind: 'rejected'; reason: RejectionReason; providerStatus: number | null; message: string }
  /** No usable answer in time: a timeout, a connection failure, a provider-side error. A retry may work. */
  | { kind: 'unavailable'; message: string }
  /** An answer that is not what was asked for (not JSON, missing fields, cut off at the output bound). */
  | { kind: 'malformed'; message: string };

export type ModelResult<T> = { ok: true; value: T } | { ok: false; error: ModelProviderError };

export interface ModelProvider {
  /** `sandbox` or `openai-compatible`. */
  readonly name: string;
  /** Whether `enhance` of a website wants the page's text (the sandbox reads nothing). */
  readonly readsWebsites: boolean;
  generatePersona(input: GenerateInput): Promise<ModelResult<{ persona: string }>>;
  draftPersona(input: DraftInput): Promise<ModelResult<DraftOutput>>;
  /** Builds a persona's text from its configuration alone (publishing a draft whose text is empty). */
  composePersona(config: PersonaConfig): Promise<ModelResult<{ persona: string }>>;
  enhance(input: EnhanceInput): Promise<ModelResult<Suggestion>>;
}

/** Whether a section is included: an omitted switch counts as included. */
export const includes = (config: PersonaConfig, section: (typeof SECTIONS)[number]): boolean => config[section.switch] !== false;

/** The text of a persona, whichever form it has (the object's parts joined). */
export function personaText(p: Persona | null | undefined): string {
  if (p === null || p === undefined) return '';
  if (typeof p === 'string') return p;
  return [p.base, p.voice, p.text].filter((s): s is string => typeof s === 'string' && s !== '').join('\n');
}
