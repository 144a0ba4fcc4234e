/**
 * The sandbox model provider: deterministic, in-process, no network. The
 * same input always gives the same output, so the persona routes are served
 * and testable with no configuration (the embedded default).
 *
 *   generate   a non-empty text naming `agentName` when one is given
 *   draft      every string of each included section, none of an omitted one
 *              (an omitted switch counts as included); a given `persona`
 *              fills the sections the body left out, one line each
 *   enhance    `suggestedPersona` begins with the persona being enhanced
 *              (a string), or is the object form with a suggestion appended
 *              to its `text`; `suggestedConfig` is the configuration with the
 *              suggestion applied. It never fetches `websiteUrl`.
 */
import {
  includes, personaText, SECTIONS,
  type DraftInput, type DraftOutput, type EnhanceInput, type GenerateInput, type ModelProvider, type ModelResult,
  type Persona, type PersonaConfig, type Suggestion,
} from './port.js';

const ok = <T>(value: T): ModelResult<T> => ({ ok: true, value });

/** A persona's text from a configuration: the identity line, the voice, then each included section. */
export function composeFromConfig(config: PersonaConfig): string {
  const lines: string[] = [];
  const who = config.agentName ? `You are ${config.agentName}` : 'You are a helpful assistant';
  lines.push(`${who}${config.businessType ? `, representing a ${config.businessType} business` : ''}.`);
  if (config.businessWebsite) lines.push(`The business website is ${config.businessWebsite}.`);
  const voice = (config.voiceChips ?? []).filter((c) => c.isEnabled).map((c) => c.title);
  if (voice.length > 0) lines.push(`Your voice is ${voice.join(', ')}.`);
  for (const section of SECTIONS) {
    const items = config[section.field] ?? [];
    if (!includes(config, section) || items.length === 0) continue;
    lines.push('', `## ${section.title}`, ...items.map((i) => `- ${i}`));
  }
  return lines.join('\n');
}

/** Sections a persona's text fills when the configuration left them out: its non-empty lines, as the role. */
function extractConfig(config: PersonaConfig, persona: Persona | undefined): PersonaConfig {
  if (persona === undefined || config.roleAndPurpose !== undefined) return { ...config };
  const lines = personaText(persona).split('\n').map((l) => l.replace(/^[-#*\s]+/, '').trim()).filter((l) => l !== '');
  return lines.length > 0 ? { ...config, roleAndPurpose: lines.slice(0, 50) } : { ...config };
}

function suggest(current: Persona | null, addition: string): Persona {
  if (current === null) return addition;
  if (typeof current === 'string') return current === '' ? addition : `${current}\n\n${addition}`;
  return { ...current, text: current.text ? `${current.text}\n\n${addition}` : addition };
}

const append = (list: string[] | undefined, item: string): string[] => (list?.includes(item) ? [...list] : [...(list ?? []), item]);

export function createSandboxModelProvider(): ModelProvider {
  return {
    name: 'sandbox',
    readsWebsites: false,
    async generatePersona(input: GenerateInput): Promise<ModelResult<{ persona: string }>> {
      const traits = [input.brandPersonality, input.brandTraits].filter((s): s is string => typeof s === 'string' && s !== '');
      return ok({
        persona: composeFromConfig({
          ...(input.agentName !== undefined ? { agentName: input.agentName } : {}),
          ...(input.businessType !== undefined ? { businessType: input.businessType } : {}),
          ...(input.businessWebsite !== undefined ? { businessWebsite: input.businessWebsite } : {}),
          ...(traits.length > 0 ? { personalityAndVoice: traits } : {}),
        }),
      });
    },
    async draftPersona(input: DraftInput): Promise<ModelResult<DraftOutput>> {
      const config = extractConfig(input.config, input.persona);
      return ok({ persona: composeFromConfig(config), config });
    },
    async composePersona(config: PersonaConfig): Promise<ModelResult<{ persona: string }>> {
      return ok({ persona: composeFromConfig(config) });
    },
    async enhance(input: EnhanceInput): Promise<ModelResult<Suggestion>> {
      const config = input.currentConfig;
      switch (input.kind) {
        case 'website':
          return ok({
            suggestedPersona: suggest(input.currentPersona, `Draw on what ${input.websiteUrl} says about the business when you answer.`),
            suggestedConfig: { ...config, businessWebsite: input.websiteUrl },
          });
        case 'storytelling': {
          const line = 'Tell short, concrete stories about how customers were helped.';
          return ok({ suggestedPersona: suggest(input.currentPersona, line), suggestedConfig: { ...config, personalityAndVoice: append(config.personalityAndVoice, line) } });
        }
        case 'instructions': {
          const rules = [
            ...(input.instructions ? [input.instructions] : []),
            ...(input.examples ?? []).map((e) => `Instead of "${e.agentReply}", reply "${e.expectedReply}" (${e.reason}).`),
          ];
          const rulesAndBoundaries = rules.reduce<string[] | undefined>((acc, r) => append(acc, r), config.rulesAndBoundaries) ?? [];
          return ok({
            suggestedPersona: suggest(input.currentPersona, rules.length > 0 ? rules.join('\n') : 'Follow the rules and boundaries of your configuration.'),
            suggestedConfig: { ...config, rulesAndBoundaries },
          });
        }
      }
    },
  };
}
