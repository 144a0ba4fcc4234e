/**
 * The seed file's `skills` array (contract skills, seed file): the
 * organizations' own (developer) skills `{id, orgId, name, description}`,
 * which can be listed on the marketplace; checked with the seed file,
 * upserted by id on its transaction.
 */
import type { SeedSection } from '../../seed/seed-file.js';
import { RESOURCE_ID } from '../../api/kernel/access.js';
import { createSkillsRepo, type SourceSkill } from './repository.js';

export const skillsSeed: SeedSection = {
  key: 'skills',
  check(raw, orgIds) {
    if (!Array.isArray(raw)) return ['skills must be an array of objects'];
    const problems: string[] = [];
    const seen = new Set<string>();
    raw.forEach((v: unknown, i) => {
      const at = `skills[${i}]`;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        problems.push(`${at} must be an object`);
        return;
      }
      const s = v as Record<string, unknown>;
      if (typeof s.id !== 'string' || !RESOURCE_ID.test(s.id)) problems.push(`${at}.id must be 1-128 letters, digits, _ or -`);
      else if (seen.has(s.id)) problems.push(`${at}.id is given twice`);
      else seen.add(s.id);
      if (typeof s.orgId !== 'string' || !orgIds.has(s.orgId)) problems.push(`${at}.orgId names no org of this file`);
      if (typeof s.name !== 'string' || s.name === '' || s.name.length > 200) problems.push(`${at}.name must be a string of 1-200 characters`);
      if (s.description !== undefined && (typeof s.description !== 'string' || s.description.length > 2000)) problems.push(`${at}.description must be a string of at most 2000 characters`);
    });
    return problems;
  },
  async apply(tx, items) {
    const sources = items.map((v) => {
      const s = v as { id: string; orgId: string; name: string; description?: string };
      return { id: s.id, orgId: s.orgId, name: s.name, description: s.description ?? '' } satisfies SourceSkill;
    });
    await createSkillsRepo(tx).upsertSources(sources);
  },
};
