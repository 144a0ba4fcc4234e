/**
 * The real model provider: any OpenAI-compatible chat-completions endpoint,
 * through the official `openai` package. Each call is bounded in time
 * (`timeoutMs`, no retries: the caller's request is waiting) and in output
 * (`maxOutputTokens`, and at most MAX_ANSWER_CHARS characters read); the
 * model is asked for one JSON object, and anything else is a `malformed`
 * answer. A refusal (the message's `refusal`, a `content_filter` finish) is
 * `rejected` with reason `content_refused`; the provider's own statuses map
 * to spec 01 part 7.1's `424` reasons; timeouts, connection failures and the
 * provider's 5xx are `unavailable`.
 */
import type OpenAI from 'openai';
import {
  personaText, SECTIONS,
  type DraftInput, type DraftOutput, type EnhanceInput, type GenerateInput, type ModelProvider, type ModelProviderError,
  type ModelResult, type Persona, type PersonaConfig, type Suggestion,
} from './port.js';

export interface OpenAiProviderOptions {
  /** The API's base URL (`https://api.example.com/v1`). */
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxOutputTokens: number;
}

/** The longest answer read; a longer one is refused as malformed rather than stored. */
export const MAX_ANSWER_CHARS = 200_000;
/** The longest website text handed to the model. */
export const MAX_WEBSITE_CHARS = 20_000;

const SYSTEM = 'You write and improve personas (system prompts) for customer-facing AI agents. '
  + 'Answer with exactly one JSON object and nothing else.';

const CONFIG_HELP = 'A configuration is an object with optional fields agentName, businessWebsite, businessType (strings), '
  + 'voiceChips ([{title, isEnabled}]), roleAndPurpose, contextAndAudience, personalityAndVoice, rulesAndBoundaries, '
  + 'aboutProductsOrServices (arrays of strings) and the switches hasRoleAndPurpose, hasContextAndAudience, '
  + 'hasPersonalityAndVoice, hasRulesAndBoundaries, hasBusinessInfo (booleans; false omits that section).';

export function createOpenAiModelProvider(opts: OpenAiProviderOptions): ModelProvider {
  // The package is loaded on the first call, not with the process: a worker, and an API whose
  // provider is the sandbox, never need it (its load costs a process some 6 MB of memory).
  let loaded: Promise<{ sdk: OpenAiSdk; client: OpenAI }> | undefined;
  const clientOf = () => (loaded ??= import('openai').then(({ default: sdk }) => (
    { sdk, client: new sdk({ baseURL: opts.baseUrl, apiKey: opts.apiKey, timeout: opts.timeoutMs, maxRetries: 0 }) }
  )));

  /** One chat completion whose answer is a JSON object, or the error value it came to. */
  async function ask(prompt: string): Promise<ModelResult<Record<string, unknown>>> {
    const { sdk, client } = await clientOf();
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await client.chat.completions.create({
        model: opts.model,
        messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: prompt }],
        max_tokens: opts.maxOutputTokens,
        response_format: { type: 'json_object' },
      });
    } catch (e) {
      return { ok: false, error: errorOf(sdk, e) };
    }
    const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
    if (!choice || typeof choice !== 'object' || !choice.message) return malformed('the answer holds no message');
    if (typeof choice.message.refusal === 'string' && choice.message.refusal !== '') {
      return { ok: false, error: { kind: 'rejected', reason: 'content_refused', providerStatus: 200, message: `The model provider refused the request: ${choice.message.refusal.slice(0, 300)}` } };
    }
    if (choice.finish_reason === 'content_filter') {
      return { ok: false, error: { kind: 'rejected', reason: 'content_refused', providerStatus: 200, message: 'The model provider refused the request (content filter).' } };
    }
    if (choice.finish_reason === 'length') return malformed(`the answer was cut off at the output bound (${opts.maxOutputTokens} tokens)`);
    const content = choice.message.content;
    if (typeof content !== 'string' || content.trim() === '') return malformed('the answer is empty');
    if (content.length > MAX_ANSWER_CHARS) return malformed(`the answer is over ${MAX_ANSWER_CHARS} characters`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(stripFence(content));
    } catch {
      return malformed('the answer is not a JSON object');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return malformed('the answer is not a JSON object');
    return { ok: true, value: parsed as Record<string, unknown> };
  }

  async function askPersona(prompt: string): Promise<ModelResult<{ persona: string }>> {
    const answer = await ask(`${prompt}\nAnswer as {"persona": "<the persona text>"}.`);
    if (!answer.ok) return answer;
    const persona = answer.value.persona;
    if (typeof persona !== 'string' || persona.trim() === '') return malformed('the answer has no non-empty "persona" string');
    return { ok: true, value: { persona } };
  }

  return {
    name: 'openai-compatible',
    readsWebsites: true,
    generatePersona(input: GenerateInput) {
      return askPersona(`Write a persona for an AI agent from these business facts: ${JSON.stringify(input)}.`
        + (input.agentName ? ` The agent's name is ${JSON.stringify(input.agentName)}; the persona must name it.` : ''));
    },
    async draftPersona(input: DraftInput): Promise<ModelResult<DraftOutput>> {
      const answer = await ask(
        `${CONFIG_HELP}\nWrite a persona from this configuration: ${JSON.stringify(input.config)}.`
        + ` Include every item of each section whose switch is not false and nothing of a section whose switch is false.`
        + (input.persona !== undefined ? ` Extract the sections the configuration leaves out from this existing persona: ${JSON.stringify(personaText(input.persona))}.` : '')
        + '\nAnswer as {"persona": "<the persona text>", "config": <the complete configuration>}.',
      );
      if (!answer.ok) return answer;
      const { persona, config } = answer.value;
      if (typeof persona !== 'string' || persona.trim() === '') return malformed('the answer has no non-empty "persona" string');
      const extracted = config === undefined ? {} : configOf(config);
      if (!extracted) return malformed('the answer\'s "config" is not a configuration');
      // The fields the caller gave stay as given.
      return { ok: true, value: { persona, config: { ...extracted, ...input.config } } };
    },
    composePersona(config: PersonaConfig) {
      return askPersona(`${CONFIG_HELP}\nWrite a persona from this configuration: ${JSON.stringify(config)}.`);
    },
    async enhance(input: EnhanceInput): Promise<ModelResult<Suggestion>> {
      const base = `${CONFIG_HELP}\nThe agent's current persona: ${JSON.stringify(input.currentPersona)}. Its current configuration: ${JSON.stringify(input.currentConfig)}.`;
      const task = input.kind === 'website'
        ? `Improve both from this text of the business website ${input.websiteUrl}: ${JSON.stringify((input.websiteText ?? '').slice(0, MAX_WEBSITE_CHARS))}.`
        : input.kind === 'storytelling'
          ? 'Improve both so the agent tells short, concrete stories.'
          : `Improve both to follow these instructions: ${JSON.stringify(input.instructions ?? '')} and these corrected examples: ${JSON.stringify(input.examples ?? [])}.`;
      const answer = await ask(`${base}\n${task}\nAnswer as {"suggestedPersona": <a string, or an object {base, voice, text}>, "suggestedConfig": <the configuration>}.`);
      if (!answer.ok) return answer;
      const suggestedPersona = personaOf(answer.value.suggestedPersona);
      const suggestedConfig = configOf(answer.value.suggestedConfig);
      if (suggestedPersona === undefined) return malformed('the answer has no "suggestedPersona" string or {base, voice, text} object');
      if (!suggestedConfig) return malformed('the answer\'s "suggestedConfig" is not a configuration');
      return { ok: true, value: { suggestedPersona, suggestedConfig } };
    },
  };
}

const malformed = (what: string): { ok: false; error: ModelProviderError } => ({ ok: false, error: { kind: 'malformed', message: `The model provider's answer could not be used: ${what}.` } });

/** A JSON answer some models still wrap in a Markdown fence. */
const stripFence = (s: string): string => s.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');

type OpenAiSdk = typeof import('openai').default;

function errorOf(OpenAI: OpenAiSdk, e: unknown): ModelProviderError {
  if (e instanceof OpenAI.APIConnectionTimeoutError) return { kind: 'unavailable', message: 'The model provider did not answer in time.' };
  if (e instanceof OpenAI.APIConnectionError) return { kind: 'unavailable', message: 'The model provider could not be reached.' };
  if (e instanceof OpenAI.APIError && typeof e.status === 'number') {
    const status = e.status;
    const code = typeof e.code === 'string' ? e.code : '';
    const rejected = (reason: Extract<ModelProviderError, { kind: 'rejected' }>['reason'], what: string): ModelProviderError =>
      ({ kind: 'rejected', reason, providerStatus: status, message: `The model provider rejected the request: ${what} (status ${status}).` });
    if (status === 401) return rejected('invalid_api_key', 'the API key was refused');
    if (status === 403) return rejected('forbidden', 'the key may not use this model');
    if (status === 404) return rejected('model_not_found', 'the model was not found');
    if (status === 429 && code === 'insufficient_quota') return rejected('quota_exhausted', 'the quota is exhausted');
    if (code === 'content_filter' || code === 'content_policy_violation') return rejected('content_refused', 'the content was refused');
    if (status === 400 || status === 413 || status === 422) return rejected('bad_request', 'the request was refused');
    return { kind: 'unavailable', message: `The model provider failed (status ${status}).` };
  }
  return { kind: 'unavailable', message: 'The model provider failed.' };
}

function personaOf(v: unknown): Persona | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const out: { base?: string; voice?: string; text?: string } = {};
  for (const k of ['base', 'voice', 'text'] as const) {
    const part = (v as Record<string, unknown>)[k];
    if (part === undefined || part === null) continue;
    if (typeof part !== 'string') return undefined;
    out[k] = part;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const STRING_FIELDS = ['agentName', 'businessWebsite', 'presetId', 'businessType'] as const;
const SWITCHES = SECTIONS.map((s) => s.switch);

/** A configuration from a model's answer: its known fields of the right types; undefined when it is not an object. */
export function configOf(v: unknown): PersonaConfig | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of STRING_FIELDS) if (typeof o[k] === 'string') out[k] = o[k];
  for (const s of SECTIONS) {
    const list = o[s.field];
    if (Array.isArray(list)) out[s.field] = list.filter((x): x is string => typeof x === 'string').slice(0, 100);
  }
  for (const k of SWITCHES) if (typeof o[k] === 'boolean') out[k] = o[k];
  if (Array.isArray(o.voiceChips)) {
    out.voiceChips = o.voiceChips
      .filter((c): c is { title: string; isEnabled: boolean } => typeof c === 'object' && c !== null && typeof c.title === 'string' && typeof c.isEnabled === 'boolean')
      .map((c) => ({ title: c.title, isEnabled: c.isEnabled }))
      .slice(0, 100);
  }
  return out as PersonaConfig;
}
