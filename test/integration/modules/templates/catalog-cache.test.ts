/**
 * The template catalog's reads answer from the kernel's read cache (service.ts): the list's pages, a
 * template and a manifest's version. Each write of the API shows in them at once (an authoring
 * write, an install and an uninstall counting a template's installs), and on Postgres another API
 * process's writes on its notification. Every read is made twice before a write, so that the one
 * after it would find a cached entry if the write did not drop it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { waitFor } from '../../../helpers/app.js';
import { requestOther, twoApisOnOneDatabase } from '../../../helpers/two-apis.js';
import { call, createTemplate, publishVersion, TEMPLATES } from '../../../helpers/templates.js';
import { TEMPLATES_TOPIC } from '../../../../src/modules/templates/topic.js';

const SEED = new URL('../../../fixtures/seed-template-installs.json', import.meta.url).pathname;
const TOKEN = 'lk_t_all';
type Catalog = { templates: { id: string; latestVersion: number }[]; total: number };

/** The same answer twice: the second from the cache. */
async function readTwice<T>(read: () => Promise<T>): Promise<T> {
  const first = await read();
  expect(await read()).toEqual(first);
  return first;
}

describe('the template catalog within one API', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SEED, TRUST_PROXY: 'true' });
  });
  afterAll(async () => app?.stop());

  const list = async (): Promise<Catalog> => (await call(app, 'GET', `${TEMPLATES}?limit=100`, { token: 'sess_ann' })).body as Catalog;
  const template = async (id: string) => (await call(app, 'GET', `${TEMPLATES}/${id}`, { token: 'sess_ann' })).body as { installCount: number; activeInstallCount: number; displayName: string };
  const manifest = async (id: string) => (await call(app, 'GET', `${TEMPLATES}/${id}/manifest`, { token: 'sess_ann' })).body as { version: number; contentHash: string };

  it('shows a new template and its new versions at once', async () => {
    const before = await readTwice(list);
    const created = await createTemplate(app, TOKEN, { creatorOrgId: 'org_acme', name: 'cached', displayName: 'Cached', visibility: 'private' });
    const after = await readTwice(list);
    expect(after.total).toBe(before.total + 1);
    expect(after.templates.find((t) => t.id === created.id)?.latestVersion).toBe(0);

    await publishVersion(app, TOKEN, created.id, { changelog: 'first' });
    expect((await readTwice(list)).templates.find((t) => t.id === created.id)?.latestVersion).toBe(1);
    const first = await readTwice(() => manifest(created.id));
    expect(first.version).toBe(1);
    await publishVersion(app, TOKEN, created.id, { changelog: 'second', declaredTriggers: [{ key: 'nightly' }] });
    const second = await readTwice(() => manifest(created.id));
    expect(second.version).toBe(2);
    expect(second.contentHash).not.toBe(first.contentHash);

    expect((await call(app, 'PATCH', `${TEMPLATES}/${created.id}`, { token: TOKEN, body: { displayName: 'Renamed' } })).status).toBe(200);
    expect((await readTwice(() => template(created.id))).displayName).toBe('Renamed');
  });

  it('counts an install and an uninstall in the template at once', async () => {
    const tpl = await createTemplate(app, TOKEN, { creatorOrgId: 'org_acme', name: 'counted', displayName: 'Counted', visibility: 'private' });
    await publishVersion(app, TOKEN, tpl.id, {});
    expect(await readTwice(() => template(tpl.id))).toMatchObject({ installCount: 0, activeInstallCount: 0 });
    const installed = await call(app, 'POST', `${TEMPLATES}/${tpl.id}/install/agt_plain`, { token: TOKEN, body: {} });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    expect(await readTwice(() => template(tpl.id))).toMatchObject({ installCount: 1, activeInstallCount: 1 });
    expect((await call(app, 'DELETE', `${TEMPLATES}/${tpl.id}/installs/agt_plain`, { token: TOKEN })).status).toBe(200);
    expect(await readTwice(() => template(tpl.id))).toMatchObject({ installCount: 1, activeInstallCount: 0 });
  });
});

describe('the template catalog across API processes on Postgres', () => {
  const env = { SEED_FILE: SEED, TRUST_PROXY: 'true' };
  const apis = twoApisOnOneDatabase({ app: env, other: (db) => ({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, LOG_LEVEL: 'silent', ...env }) });

  const there = (method: string, path: string, body?: unknown) => requestOther(apis, TOKEN, method, path, body);

  it("drops an entry of the templates' topic on another process's write", async () => {
    // An age far beyond the test: only the other process's notification can make it read again.
    const cache = apis.caches.cache<number>(TEMPLATES_TOPIC, { maxAgeMs: 600_000 });
    const count = async () => (await apis.app.store.sql.query<{ n: number }>('select count(*)::int as n from template_versions'))[0]!.n;
    const before = await cache.get('versions', count);
    const created = await there('POST', TEMPLATES, { creatorOrgId: 'org_acme', name: 'notified', displayName: 'Notified', visibility: 'private' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await there('POST', `${TEMPLATES}/${created.body.id}/versions`, {})).status).toBe(201);
    await waitFor(async () => (await cache.get('versions', count)) === before + 1, { timeoutMs: 10_000, what: "the other process's version in the cached count" });
  });

  it("shows another process's new template and new version", async () => {
    const list = async (): Promise<Catalog> => (await call(apis.app, 'GET', `${TEMPLATES}?limit=100`, { token: 'sess_ann' })).body as Catalog;
    const before = await readTwice(list);
    const created = await there('POST', TEMPLATES, { creatorOrgId: 'org_acme', name: 'elsewhere', displayName: 'Elsewhere', visibility: 'private' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await waitFor(async () => (await list()).templates.some((t) => t.id === created.body.id), { timeoutMs: 10_000, what: "the other process's template in the list" });
    expect((await list()).total).toBe(before.total + 1);

    const latest = async () => (await list()).templates.find((t) => t.id === created.body.id)?.latestVersion;
    expect(await readTwice(latest)).toBe(0);
    expect((await there('POST', `${TEMPLATES}/${created.body.id}/versions`, {})).status).toBe(201);
    await waitFor(async () => (await latest()) === 1, { timeoutMs: 10_000, what: "the other process's version in the list" });
  });
});
