/** The skills family's seed section (`skills`: the organizations' own skills that can be listed on the marketplace). */
import { describe, expect, it } from 'vitest';
import { parseSeed, SeedError } from '../../../../src/seed/seed-file.js';
import { skillsSeed } from '../../../../src/modules/skills/seed.js';

const base = { orgs: [{ id: 'org_a', name: 'A' }], users: [], agents: [], apiKeys: [], sessions: [] };

describe('skills seed section', () => {
  it('takes well-formed source skills, description optional', () => {
    const skills = [{ id: 'skl_a', orgId: 'org_a', name: 'crm-lookup', description: 'Looks customers up' }, { id: 'skl_b', orgId: 'org_a', name: 'weather' }];
    expect(parseSeed({ ...base, skills }, [skillsSeed]).sections).toEqual([{ section: skillsSeed, items: skills }]);
  });

  it('names every problem of a malformed array', () => {
    let thrown: unknown;
    try {
      parseSeed({ ...base, skills: [{ id: 'bad id', orgId: 'org_nope', name: '' }, 'x', { id: 'skl_c', orgId: 'org_a', name: 'c', description: 3 }, { id: 'skl_c', orgId: 'org_a', name: 'd' }] }, [skillsSeed]);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(SeedError);
    expect((thrown as SeedError).problems).toEqual(expect.arrayContaining([
      'skills[0].id must be 1-128 letters, digits, _ or -',
      'skills[0].orgId names no org of this file',
      'skills[0].name must be a string of 1-200 characters',
      'skills[1] must be an object',
      'skills[2].description must be a string of at most 2000 characters',
      'skills[3].id is given twice',
    ]));
    expect(skillsSeed.check({}, new Set())).toEqual(['skills must be an array of objects']);
  });
});
