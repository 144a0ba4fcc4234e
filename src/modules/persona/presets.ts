/**
 * The preset catalog (contract P14): the built-in presets, then the seed
 * file's optional top-level `personaPresets` array, upserted by id when the
 * seed file is applied (a seeded preset replaces a built-in one of its id).
 */
import { Value } from '@sinclair/typebox/value';
import { Config } from './schemas.js';
import { createPersonaRepo, type Preset } from './repository.js';
import type { SeedSection } from '../../seed/seed-file.js';
import type { Sql } from '../../store/sql.js';
import { RESOURCE_ID } from '../../api/kernel/access.js';

export const BUILT_IN_PRESETS: readonly Preset[] = [
  {
    id: 'pre_customer_support',
    title: 'Customer support',
    description: 'Answers questions about orders and accounts patiently, and hands over to a person when it cannot help.',
    config: {
      roleAndPurpose: ['Help customers with questions about their orders, accounts and our policies.'],
      personalityAndVoice: ['Patient, warm and precise.'],
      rulesAndBoundaries: ['Never promise refunds or exceptions; offer to hand the conversation to a person instead.'],
      voiceChips: [{ title: 'Friendly', isEnabled: true }, { title: 'Formal', isEnabled: false }],
    },
  },
  {
    id: 'pre_sales_assistant',
    title: 'Sales assistant',
    description: 'Qualifies leads and explains the offer without pressure.',
    config: {
      roleAndPurpose: ['Understand what the visitor needs and explain how our offer fits.'],
      contextAndAudience: ['Prospective customers comparing options.'],
      personalityAndVoice: ['Curious, confident, never pushy.'],
      rulesAndBoundaries: ['Quote only published prices.'],
    },
  },
  {
    id: 'pre_receptionist',
    title: 'Receptionist',
    description: 'Greets callers, takes messages and books appointments.',
    config: {
      roleAndPurpose: ['Greet callers, take messages and book appointments.'],
      personalityAndVoice: ['Courteous and brief.'],
      rulesAndBoundaries: ['Confirm every appointment back to the caller.'],
    },
  },
];

/** The seed file's `personaPresets` (CONTRACT part 6): checked with the seed file, upserted by id on its transaction. */
export const personaPresetsSeed: SeedSection = {
  key: 'personaPresets',
  check(raw: unknown): string[] {
    if (!Array.isArray(raw)) return ['personaPresets must be an array'];
    const problems: string[] = [];
    raw.forEach((p: unknown, i) => {
      const at = `personaPresets[${i}]`;
      if (typeof p !== 'object' || p === null || Array.isArray(p)) return problems.push(`${at} must be an object`);
      const o = p as Record<string, unknown>;
      if (typeof o.id !== 'string' || !RESOURCE_ID.test(o.id)) problems.push(`${at}.id must be 1-128 letters, digits, _ or -`);
      if (typeof o.title !== 'string' || o.title === '') problems.push(`${at}.title must be a non-empty string`);
      if (o.description !== undefined && typeof o.description !== 'string') problems.push(`${at}.description must be a string`);
      const config = o.config ?? {};
      if (!Value.Check(Config, config)) {
        problems.push(`${at}.config: ${[...Value.Errors(Config, config)].slice(0, 3).map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
      }
      return undefined;
    });
    return problems;
  },
  async apply(tx: Sql, items: readonly unknown[]): Promise<void> {
    const presets = items.map((p) => {
      const o = p as { id: string; title: string; description?: string; config?: Preset['config'] };
      return { id: o.id, title: o.title, description: o.description ?? '', config: o.config ?? {} };
    });
    await createPersonaRepo(tx).upsertPresets(presets);
  },
};

/** The catalog: the built-in presets (a seeded one of the same id in its place), then the other seeded ones in seed order. */
export function catalog(seeded: readonly Preset[]): Preset[] {
  const byId = new Map(seeded.map((p) => [p.id, p]));
  const builtIn = BUILT_IN_PRESETS.map((b) => byId.get(b.id) ?? b);
  const builtInIds = new Set(BUILT_IN_PRESETS.map((b) => b.id));
  return [...builtIn, ...seeded.filter((p) => !builtInIds.has(p.id))];
}
