/**
 * GET /marketplace/skills (spec 03 parts 4.5 and 8; contract skills): every filter, the free-text
 * `search` (case-insensitive substring of name, displayName or description, with `%`, `_` and `\`
 * taken literally), page-numbered paging with spec 01 part 2.5's fields and `page, limit, total,
 * totalPages`, `limit` 1-100 (default 10) and `page` from 1, anything else 400; visible skills only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { frameworkError, listSkill, publish, SKILLS, SKILLS_SEED } from '../../../helpers/skills.js';

describe('marketplace skill search', () => {
  let app: TestApi;
  const ids = {} as Record<'crm' | 'weather' | 'pct' | 'under' | 'bslash' | 'priv' | 'globex' | 'globexPriv', string>;
  const search = async (query: string, token = 'lk_s_read') => {
    const res = await app.request('GET', `${SKILLS}${query}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { data: any[]; pagination: any };
  };
  const sources = async (query: string, token?: string) => (await search(query, token)).data.map((s) => s.sourceSkillId).sort();

  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SKILLS_SEED });
    ids.crm = (await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_crm', displayName: 'CRM Lookup', category: 'crm' })).id;
    ids.weather = (await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_weather', displayName: 'Weather Now', category: 'utility' })).id;
    ids.pct = (await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_pct', displayName: 'Pricing', category: 'utility' })).id;
    ids.under = (await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_under', displayName: 'Renamer', category: 'utility' })).id;
    ids.bslash = (await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_bslash', displayName: 'Path Tools', category: 'utility' })).id;
    ids.priv = (await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_private', displayName: 'Internal', visibility: 'private', category: 'crm' })).id;
    ids.globex = (await listSkill(app, 'lk_g_all', { sourceSkillId: 'skl_globex', displayName: 'Globex Search', category: 'crm' })).id;
    ids.globexPriv = (await listSkill(app, 'lk_g_all', { sourceSkillId: 'skl_globex_private', displayName: 'Globex Secret', visibility: 'private', category: 'crm' })).id;
    await publish(app, 'lk_s_write', ids.crm, '1.0.0');
    await publish(app, 'lk_g_all', ids.globex, '1.0.0');
    // Weather unlisted (its only version unpublished): listed false, no published version.
    await publish(app, 'lk_s_write', ids.weather, '1.0.0');
    expect((await app.request('PUT', `${SKILLS}/${ids.weather}/unlist`, { token: 'lk_s_write' })).status).toBe(200);
    // Verified and featured are set by marketplace review, which has no route here.
    await app.store.sql.query('update skills set verified = true, featured = true where id = $1', [ids.crm]);
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('answers the visible skills with spec 01\'s page-numbered pagination and page, limit, total, totalPages', async () => {
    const all = await search('');
    expect(all.data.map((s) => s.sourceSkillId).sort()).toEqual(['skl_bslash', 'skl_crm', 'skl_globex', 'skl_pct', 'skl_private', 'skl_under', 'skl_weather']);
    expect(all.pagination).toEqual({
      page: 1, limit: 10, total: 7, totalPages: 1, currentPage: 1, totalCount: 7, hasNextPage: false, hasPrevPage: false, nextPage: null, prevPage: null, totalCountExact: true,
    });
    // Globex sees its own private skill and Acme's public ones, never Acme's private one.
    expect(await sources('', 'sess_gus')).toEqual(['skl_bslash', 'skl_crm', 'skl_globex', 'skl_globex_private', 'skl_pct', 'skl_under', 'skl_weather']);
    // Newest first.
    expect(all.data[0].id).toBe(ids.globex);
  });

  it('pages: page 1-based, limit 1-100 (default 10); a page past the end is empty', async () => {
    const p1 = await search('?limit=3');
    const p2 = await search('?limit=3&page=2');
    const p3 = await search('?limit=3&page=3');
    expect(p1.pagination).toMatchObject({ page: 1, limit: 3, total: 7, totalPages: 3, hasNextPage: true, hasPrevPage: false, nextPage: 2, prevPage: null });
    expect(p2.pagination).toMatchObject({ page: 2, currentPage: 2, hasNextPage: true, hasPrevPage: true, nextPage: 3, prevPage: 1 });
    expect(p3.pagination).toMatchObject({ page: 3, hasNextPage: false, nextPage: null, prevPage: 2 });
    expect(p3.data).toHaveLength(1);
    const seen = [...p1.data, ...p2.data, ...p3.data].map((s) => s.id);
    expect(new Set(seen).size).toBe(7);
    expect((await search('?limit=3&page=9')).data).toEqual([]);
    expect((await search('?limit=100')).pagination.limit).toBe(100);
    expect((await search('?limit=1')).data).toHaveLength(1);
  });

  it('refuses a limit outside 1-100 and a page below 1 or not a number (400, framework shape)', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=1e2', 'page=0', 'page=-1', 'page=x', 'limit=5&limit=6', 'listed=yes', 'featured=1', 'search=', 'search=a%01b', 'search=a%0Ab', `search=${'x'.repeat(201)}`]) {
      const res = await app.request('GET', `${SKILLS}?${q}`, { token: 'lk_s_read' });
      expect(res.status, q).toBe(400);
      expect(res.body, q).toEqual(frameworkError(400, expect.any(Array)));
    }
  });

  it('filters by listed, verified, featured, hasPublishedVersion, category, name and creatorId', async () => {
    expect(await sources('?listed=false')).toEqual(['skl_weather']);
    expect((await sources('?listed=true')).includes('skl_weather')).toBe(false);
    expect(await sources('?verified=true')).toEqual(['skl_crm']);
    expect(await sources('?featured=true')).toEqual(['skl_crm']);
    expect((await sources('?featured=false')).length).toBe(6);
    expect(await sources('?hasPublishedVersion=true')).toEqual(['skl_crm', 'skl_globex']);
    expect(await sources('?hasPublishedVersion=false')).toEqual(['skl_bslash', 'skl_pct', 'skl_private', 'skl_under', 'skl_weather']);
    expect(await sources('?category=crm')).toEqual(['skl_crm', 'skl_globex', 'skl_private']);
    expect(await sources('?category=CRM')).toEqual([]);
    expect(await sources('?name=weather')).toEqual(['skl_weather']);
    expect(await sources('?name=weath')).toEqual([]);
    expect(await sources('?creatorId=usr_gus')).toEqual(['skl_globex']);
    expect(await sources('?creatorId=usr_gus', 'sess_gus')).toEqual(['skl_globex', 'skl_globex_private']);
    expect(await sources('?category=crm&hasPublishedVersion=true&verified=false')).toEqual(['skl_globex']);
  });

  it('searches name, displayName and description, case-insensitively, as substrings', async () => {
    expect(await sources('?search=LOOKUP')).toEqual(['skl_crm']); // name crm-lookup, displayName CRM Lookup
    expect(await sources('?search=now')).toEqual(['skl_weather']); // displayName only
    expect(await sources('?search=forecast')).toEqual(['skl_weather']); // description only
    expect(await sources('?search=globex')).toEqual(['skl_globex']);
    expect(await sources('?search=globex', 'sess_gus')).toEqual(['skl_globex', 'skl_globex_private']);
    expect(await sources('?search=nothing-like-this')).toEqual([]);
    const paged = await search('?search=e&limit=2');
    expect(paged.pagination.total).toBeGreaterThan(2);
    expect(paged.data).toHaveLength(2);
  });

  it('takes %, _ and \\ in search literally', async () => {
    // Unescaped, `%` would match every skill, `_` any one character, and `\` would escape what follows.
    expect(await sources(`?search=${encodeURIComponent('%')}`)).toEqual(['skl_pct']);
    expect(await sources(`?search=${encodeURIComponent('100%')}`)).toEqual(['skl_pct']);
    expect(await sources(`?search=${encodeURIComponent('_')}`)).toEqual(['skl_under']);
    expect(await sources(`?search=${encodeURIComponent('e_c')}`)).toEqual(['skl_under']);
    expect(await sources(`?search=${encodeURIComponent('\\')}`)).toEqual(['skl_bslash']);
    expect(await sources(`?search=${encodeURIComponent('C:\\temp')}`)).toEqual(['skl_bslash']);
    expect(await sources(`?search=${encodeURIComponent('\\%')}`)).toEqual([]);
  });

  it('answers every skill with its versions and counts', async () => {
    const crm = (await search('?name=crm-lookup')).data[0];
    expect(crm).toMatchObject({ id: ids.crm, published: true, verified: true, featured: true, versionsCount: 1, approvedVersionsCount: 1 });
    expect(crm.versions).toEqual([expect.objectContaining({ version: '1.0.0', published: true, marketplaceSkillId: ids.crm })]);
  });
});
