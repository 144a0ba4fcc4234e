/**
 * The preset catalog (contract P14): the built-in presets, then the seed
 * file's optional top-level `personaPresets` array, upserted by id whenever
 * the API starts (a seeded preset may replace a built-in one of its id).
 */
import { readFile } from 'node:fs/promises';
import { Value } from '@sinclair/typebox/value';
import { Config } from './schemas.js';
import type { Preset } from './repository.js';
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

/** The seed file's `personaPresets`, checked: every problem listed, nothing written when there is one. */
export async function seededPresets(seedFile: string | undefined): Promise<Preset[]> {
  if (seedFile === undefined) return [];
  const data = JSON.parse(await readFile(seedFile, 'utf8')) as Record<string, unknown>;
  const raw = data?.personaPresets;
  if (raw === undefined) return [];
  const problems: string[] = [];
  if (!Array.isArray(raw)) throw new Error(`${seedFile}: personaPresets must be an array`);
  const presets: Preset[] = [];
  raw.forEach((p: unknown, i) => {
    const at = `personaPresets[${i}]`;
    if (typeof p !== 'object' || p === null || Array.isArray(p)) return problems.push(`${at} must be an object`);
    const o = p as Record<string, unknown>;
    if (typeof o.id !== 'string' || !RESOURCE_ID.test(o.id)) problems.push(`${at}.id must be 1-128 letters, digits, _ or -`);
    if (typeof o.title !== 'string' || o.title === '') problems.push(`${at}.title must be a non-empty string`);
    if (o.description !== undefined && typeof o.description !== 'string') problems.push(`${at}.description must be a string`);
    const config = o.config ?? {};
    if (!Value.Check(Config, config)) problems.push(`${at}.config: ${[...Value.Errors(Config, config)].slice(0, 3).map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
    presets.push({ id: o.id as string, title: o.title as string, description: (o.description as string | undefined) ?? '', config: config as Preset['config'] });
    return undefined;
  });
  if (problems.length > 0) throw new Error(`invalid seed file:\n  ${problems.map((p) => `${seedFile}: ${p}`).join('\n  ')}`);
  return presets;
}
