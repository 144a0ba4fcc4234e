/**
 * The marketplace search's free text on many skills: `ilike '%term%'` over name, display name and
 * description is served by the trigram GIN index of skills/001, not a scan of every row, on
 * Postgres and on the embedded store (which loads pg_trgm too).
 */
import { describe, expect, it } from 'vitest';
import { FAMILY_STORE_KINDS, storeForSuite } from '../../../helpers/stores.js';
import type { Store } from '../../../../src/store/store.js';
import { createSkillsRepo, searchStatement } from '../../../../src/modules/skills/repository.js';

const SKILLS = 10_000;

/** 10,000 public skills of one organization; every 1,000th has `needle` in its description. */
async function fill(store: Store): Promise<void> {
  await store.sql.query("insert into orgs (id, name) values ('org_plan', 'Plan')");
  await store.sql.query(`insert into skills_sources (id, org_id, name) select 'src_' || i, 'org_plan', 'skill-' || i from generate_series(1, ${SKILLS}) i`);
  await store.sql.query(
    `insert into skills (id, name, display_name, description, creator_id, creator_org_id, source_skill_id, visibility, created_at, updated_at)
     select 'mks_' || lpad(i::text, 6, '0'), 'skill-' || i, 'Skill number ' || i,
            case when i % 1000 = 0 then 'Finds the needle in haystack ' || i else 'Answers questions about topic ' || (i % 97) end,
            'usr_plan', 'org_plan', 'src_' || i, 'public', now() - i * interval '1 second', now()
     from generate_series(1, ${SKILLS}) i`,
  );
  await store.sql.query('analyze skills');
}

describe.each(FAMILY_STORE_KINDS)('marketplace search over $name', (kind) => {
  const store = storeForSuite(kind, fill);

  it('finds the rare term\'s skills, newest first, case-insensitively', async () => {
    const { skills, total } = await createSkillsRepo(store().sql).search([], { search: 'NEEDLE' }, { limit: 5, offset: 0 });
    expect(total).toBe(10);
    expect(skills.map((s) => s.id)).toEqual(['mks_001000', 'mks_002000', 'mks_003000', 'mks_004000', 'mks_005000']);
  });

  it('reads the trigram index, not every row (EXPLAIN)', async () => {
    const s = searchStatement([], { search: 'needle' }, { limit: 10, offset: 0 });
    const [row] = await store().sql.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${s.page}`, [...s.params, 10, 0]);
    const plan = JSON.stringify(row!['QUERY PLAN']);
    expect(plan).toContain('"Node Type":"Bitmap Index Scan"');
    expect(plan).toContain('"Index Name":"skills_search_trgm"');
    expect(plan).not.toContain('"Node Type":"Seq Scan"');
    const [count] = await store().sql.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${s.count}`, s.params);
    expect(JSON.stringify(count!['QUERY PLAN'])).toContain('"Index Name":"skills_search_trgm"');
  });
});
