/** The persona family's seed section (`personaPresets`) and the preset catalog's order. */
import { describe, expect, it } from 'vitest';
import { parseSeed, SeedError } from '../../../../src/seed/seed-file.js';
import { BUILT_IN_PRESETS, catalog, personaPresetsSeed } from '../../../../src/modules/persona/presets.js';

const base = { orgs: [{ id: 'org_a', name: 'A' }], users: [], agents: [], apiKeys: [], sessions: [] };

describe('personaPresets seed section', () => {
  it('takes well-formed presets', () => {
    const seed = parseSeed({ ...base, personaPresets: [{ id: 'pre_x', title: 'X', config: { roleAndPurpose: ['r'], hasBusinessInfo: false } }] }, [personaPresetsSeed]);
    expect(seed.sections).toEqual([{ section: personaPresetsSeed, items: [{ id: 'pre_x', title: 'X', config: { roleAndPurpose: ['r'], hasBusinessInfo: false } }] }]);
  });

  it('names every problem of a malformed array, and writes nothing', () => {
    let thrown: unknown;
    try {
      parseSeed({ ...base, personaPresets: [{ id: 'bad id', title: '' }, 'x', { id: 'pre_y', title: 'Y', description: 3, config: { roleAndPurpose: 'not a list' } }] }, [personaPresetsSeed]);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(SeedError);
    const problems = (thrown as SeedError).problems;
    expect(problems).toEqual(expect.arrayContaining([
      'personaPresets[0].id must be 1-128 letters, digits, _ or -',
      'personaPresets[0].title must be a non-empty string',
      'personaPresets[1] must be an object',
      'personaPresets[2].description must be a string',
      expect.stringMatching(/^personaPresets\[2\]\.config: \/roleAndPurpose /),
    ]));
    expect(personaPresetsSeed.check({}, new Set())).toEqual(['personaPresets must be an array']);
  });
});

describe('preset catalog', () => {
  it('lists the built-in presets first, a seeded one of a built-in id in its place, then the other seeded ones in order', () => {
    const replaced = { id: BUILT_IN_PRESETS[1]!.id, title: 'Replaced', description: '', config: {} };
    const extra = [{ id: 'pre_b', title: 'B', description: '', config: {} }, { id: 'pre_a', title: 'A', description: '', config: {} }];
    const ids = catalog([extra[0]!, replaced, extra[1]!]).map((p) => `${p.id}:${p.title}`);
    expect(ids).toEqual([
      `${BUILT_IN_PRESETS[0]!.id}:${BUILT_IN_PRESETS[0]!.title}`, `${replaced.id}:Replaced`, `${BUILT_IN_PRESETS[2]!.id}:${BUILT_IN_PRESETS[2]!.title}`, 'pre_b:B', 'pre_a:A',
    ]);
  });
});
