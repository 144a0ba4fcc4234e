/**
 * The skill search answers from the kernel's read cache (service.ts): a page of the search as the
 * route serialized it. Each write of the API shows in it at once (a listing, a version published, a
 * change of a skill, an install and an uninstall counting its installs, and a template install that
 * installs the skill: template-port.ts), and on Postgres another API process's writes on its
 * notification. Every search is made twice before a write, so that the one after it would find a
 * cached entry if the write did not drop it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { waitFor } from '../../../helpers/app.js';
import { requestOther, twoApisOnOneDatabase } from '../../../helpers/two-apis.js';
import { call, createTemplate, publishVersion, TEMPLATES } from '../../../helpers/templates.js';
import { SKILLS } from '../../../helpers/skills.js';

const SEED = new URL('../../../fixtures/seed-template-installs.json', import.meta.url).pathname;
const TOKEN = 'lk_t_all';
type Found = { data: { id: string; displayName: string; installCount: number; activeInstallCount: number }[]; pagination: { total: number } };

/** The same answer twice: the second from the cache. */
async function searchTwice(search: () => Promise<Found>): Promise<Found> {
  const first = await search();
  expect(await search()).toEqual(first);
  return first;
}

describe('the skill search within one API', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SEED, TRUST_PROXY: 'true' });
  });
  afterAll(async () => app?.stop());

  const search = async (query = ''): Promise<Found> => {
    const res = await call(app, 'GET', `${SKILLS}${query}`, { token: 'sess_ann' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Found;
  };
  const one = async (id: string) => (await search()).data.find((s) => s.id === id);

  it('shows a listed skill, its published version and its change at once, and counts every install', async () => {
    expect((await searchTwice(() => search())).pagination.total).toBe(0);
    const listed = await call(app, 'POST', `${SKILLS}/list`, { token: TOKEN, body: { sourceSkillId: 'skl_acme_crm', displayName: 'CRM', visibility: 'public' } });
    expect(listed.status, JSON.stringify(listed.body)).toBe(201);
    const id = listed.body.id as string;
    expect((await searchTwice(() => search())).data.map((s) => s.id)).toEqual([id]);

    expect((await searchTwice(() => search('?hasPublishedVersion=true'))).pagination.total).toBe(0);
    const published = await call(app, 'POST', `${SKILLS}/${id}/versions/publish`, { token: TOKEN, body: { version: '1.0.0' } });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    expect((await searchTwice(() => search('?hasPublishedVersion=true'))).pagination.total).toBe(1);

    expect((await call(app, 'PATCH', `${SKILLS}/${id}`, { token: TOKEN, body: { displayName: 'CRM Finder' } })).status).toBe(200);
    expect((await searchTwice(() => search('?search=finder'))).data.map((s) => s.displayName)).toEqual(['CRM Finder']);

    expect(await searchTwice(async () => ({ data: [(await one(id))!], pagination: { total: 1 } }))).toMatchObject({ data: [{ installCount: 0, activeInstallCount: 0 }] });
    expect((await call(app, 'POST', `/marketplace/install/${id}/agt_plain`, { token: TOKEN, body: {} })).status).toBe(201);
    expect(await one(id)).toMatchObject({ installCount: 1, activeInstallCount: 1 });
    await search();
    expect((await call(app, 'DELETE', `/marketplace/install/${id}/agt_plain`, { token: TOKEN })).status).toBe(200);
    expect(await one(id)).toMatchObject({ installCount: 1, activeInstallCount: 0 });

    // A template naming the skill installs it on the agent in the template install's unit of work.
    const tpl = await createTemplate(app, TOKEN, { creatorOrgId: 'org_acme', name: 'with-skill', displayName: 'With skill', visibility: 'private' });
    await publishVersion(app, TOKEN, tpl.id, { marketplaceSkills: [{ skillId: id }] });
    const seal = (await call(app, 'GET', `${TEMPLATES}/${tpl.id}/manifest`, { token: 'sess_ann' })).body.contentHash as string;
    await search();
    const installed = await call(app, 'POST', `${TEMPLATES}/${tpl.id}/install/agt_plain`, { token: TOKEN, body: { contentHash: seal } });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    expect(await one(id)).toMatchObject({ installCount: 2, activeInstallCount: 1 });
  });
});

describe('the skill search across API processes on Postgres', () => {
  const env = { SEED_FILE: SEED, TRUST_PROXY: 'true' };
  const apis = twoApisOnOneDatabase({ app: env, other: (db) => ({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, LOG_LEVEL: 'silent', ...env }) });

  const there = (method: string, path: string, body?: unknown) => requestOther(apis, TOKEN, method, path, body);

  it("shows another process's listed skill and its change", async () => {
    const search = async (query = ''): Promise<Found> => (await call(apis.app, 'GET', `${SKILLS}${query}`, { token: 'sess_ann' })).body as Found;
    expect((await searchTwice(() => search())).pagination.total).toBe(0);
    const listed = await there('POST', `${SKILLS}/list`, { sourceSkillId: 'skl_acme_crm', displayName: 'CRM', visibility: 'public' });
    expect(listed.status, JSON.stringify(listed.body)).toBe(201);
    await waitFor(async () => (await search()).pagination.total === 1, { timeoutMs: 10_000, what: "the other process's skill in the search" });

    expect((await searchTwice(() => search('?search=finder'))).pagination.total).toBe(0);
    expect((await there('PATCH', `${SKILLS}/${listed.body.id}`, { displayName: 'CRM Finder' })).status).toBe(200);
    await waitFor(async () => (await search('?search=finder')).pagination.total === 1, { timeoutMs: 10_000, what: "the other process's change in the search" });
  });
});
