/**
 * The agent template catalog (spec 03 parts 2.5, 4.4, 8, 9.3; contract templates): the list with
 * its filter and 1-based pages, the detail, versions (newest first) and per-version reads, the
 * manifest (latest and per version) with its reconciliation and `contentHash` seal, visibility on
 * every route (a template the caller may not see is 404), and the per-address catalog limits with
 * their plain 429, behind a trusted proxy and without one.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { call, createTemplate, freshAddress, publishVersion, TEMPLATES, TEMPLATES_ENV, TEMPLATES_SEED } from '../../../helpers/templates.js';

/** The seal as docs/api-templates.md tells a client to compute it, written apart from the server's. */
function clientSeal(version: any): string {
  const canonical = (v: any): string => {
    if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
    if (v !== null && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
    return JSON.stringify(v);
  };
  const sealed = Object.fromEntries(['content', 'envContract', 'connections', 'personaTemplate', 'triggerPresets', 'paramsMeta', 'onInstall', 'onUninstall', 'installPolicy']
    .map((k) => [k, version[k] ?? null]));
  return createHash('sha256').update(canonical(sealed), 'utf8').digest('hex');
}

describe('agent templates: the catalog', () => {
  let app: TestApi;
  let pub: any;
  let priv: any;
  let globexPub: any;
  let globexPriv: any;
  const get = (path: string, token = 'lk_t_read', address?: string) => call(app, 'GET', path, { token, address });

  beforeAll(async () => {
    app = await startApi(TEMPLATES_ENV);
    pub = await createTemplate(app, 'lk_t_write', { sourceAgentId: 'agt_base', name: 'pub', displayName: 'Public', visibility: 'public' });
    priv = await createTemplate(app, 'lk_t_write', { creatorOrgId: 'org_acme', name: 'priv', displayName: 'Private', visibility: 'private' });
    globexPub = await createTemplate(app, 'lk_g_all', { sourceAgentId: 'agt_globex', name: 'gpub', displayName: 'Globex Public', visibility: 'public' });
    globexPriv = await createTemplate(app, 'lk_g_all', { creatorOrgId: 'org_globex', name: 'gpriv', displayName: 'Globex Private' });
    await publishVersion(app, 'lk_t_write', pub.id, {
      envContract: { CRM_TOKEN: { description: 'token', required: true } }, declaredTriggers: [{ key: 'daily', cron: '0 9 * * *' }, { key: 'inbound' }],
      marketplaceSkills: [{ skillId: 'mks_crm' }], connections: [{ key: 'crm', type: 'crm', required: true }, { key: 'mail', type: 'email', required: false }],
      personaTemplate: { text: 'Hi ü 😀' }, channels: ['sms'], features: { voice: false }, onInstall: { workflow: 'setup' }, installPolicy: { perWorkspace: 'multiple' },
      paramsMeta: { tone: { default: 'warm' }, lang: 'en' },
    });
    await publishVersion(app, 'lk_t_write', pub.id, { changelog: 'same sections, fewer triggers' });
    await publishVersion(app, 'lk_g_all', globexPriv.id, {});
  });
  afterAll(async () => {
    await app?.stop();
  });

  describe('list', () => {
    it('lists public templates of every organization and the caller\'s own private ones, newest first, with the total', async () => {
      const acme = (await get(`${TEMPLATES}?limit=100`)).body;
      expect(acme.templates.map((t: any) => t.id)).toEqual([globexPub.id, priv.id, pub.id]);
      expect(acme.total).toBe(3);
      const globex = (await get(`${TEMPLATES}?limit=100`, 'lk_g_all')).body;
      expect(globex.templates.map((t: any) => t.id)).toEqual([globexPriv.id, globexPub.id, pub.id]);
      // A key of an organization with no templates sees the public ones only.
      expect((await get(TEMPLATES, 'lk_i_all')).body).toEqual({ templates: [expect.objectContaining({ id: globexPub.id }), expect.objectContaining({ id: pub.id })], total: 2 });
    });

    it('pages from 1 with limit; the total counts every page', async () => {
      const one = (await get(`${TEMPLATES}?page=1&limit=2`)).body;
      const two = (await get(`${TEMPLATES}?page=2&limit=2`)).body;
      const three = (await get(`${TEMPLATES}?page=3&limit=2`)).body;
      expect(one.templates.map((t: any) => t.id)).toEqual([globexPub.id, priv.id]);
      expect(two.templates.map((t: any) => t.id)).toEqual([pub.id]);
      expect(three).toEqual({ templates: [], total: 3 });
      expect(one.total).toBe(3);
      for (const q of ['page=0', 'page=-1', 'page=x', 'limit=0', 'limit=101', 'firstParty=maybe', 'colour=red']) {
        const res = await get(`${TEMPLATES}?${q}`);
        expect(res.status, q).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      }
    });

    it('filters on firstParty: templates made through the API are not first party', async () => {
      expect((await get(`${TEMPLATES}?firstParty=true`)).body).toEqual({ templates: [], total: 0 });
      expect((await get(`${TEMPLATES}?firstParty=false`)).body.total).toBe(3);
    });

    it('takes any valid credential, none other', async () => {
      expect((await get(TEMPLATES, 'lk_t_none')).status).toBe(200);
      expect((await get(TEMPLATES, 'sess_max')).status).toBe(200);
      const anonymous = await call(app, 'GET', TEMPLATES, {});
      expect(anonymous.status).toBe(401);
      expect((await get(TEMPLATES, 'lk_unknown')).status).toBe(401);
    });
  });

  describe('reads', () => {
    it('reads a visible template; one the caller may not see is 404 on every catalog route', async () => {
      expect((await get(`${TEMPLATES}/${pub.id}`, 'lk_g_all')).body).toMatchObject({ id: pub.id, latestVersion: 2, latestApprovedVersion: 2 });
      expect((await get(`${TEMPLATES}/${priv.id}`)).body).toMatchObject({ id: priv.id, visibility: 'private', latestVersion: 0 });
      for (const [id, token] of [[globexPriv.id, 'lk_t_read'], [priv.id, 'lk_g_all'], ['tpl_UNKNOWN', 'lk_t_read']] as const) {
        for (const path of ['', '/versions', '/versions/1', '/manifest', '/versions/1/manifest']) {
          const res = await get(`${TEMPLATES}/${id}${path}`, token);
          expect(res.status, `${id}${path}`).toBe(404);
          expect(res.body).toEqual({ code: 'TEMPLATE_NOT_FOUND', message: `Template ${id} not found` });
        }
      }
    });

    it('lists versions newest first, paged, and reads one', async () => {
      const all = (await get(`${TEMPLATES}/${pub.id}/versions`)).body;
      expect(all.total).toBe(2);
      expect(all.versions.map((v: any) => v.version)).toEqual([2, 1]);
      const second = (await get(`${TEMPLATES}/${pub.id}/versions?page=2&limit=1`)).body;
      expect(second).toEqual({ versions: [expect.objectContaining({ version: 1 })], total: 2 });
      const one = (await get(`${TEMPLATES}/${pub.id}/versions/1`, 'lk_g_all')).body;
      expect(one).toMatchObject({ templateId: pub.id, version: 1, approvalStatus: 'approved', connections: [{ key: 'crm', type: 'crm', required: true }, { key: 'mail', type: 'email', required: false }] });
      expect((await get(`${TEMPLATES}/${priv.id}/versions`)).body).toEqual({ versions: [], total: 0 });
      const missing = await get(`${TEMPLATES}/${pub.id}/versions/3`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ code: 'TEMPLATE_VERSION_NOT_FOUND', message: `Version 3 not found for template ${pub.id}`, version: 3 });
      expect((await get(`${TEMPLATES}/${pub.id}/versions/one`)).status).toBe(400);
    });
  });

  describe('review', () => {
    it('answers the review state, versions newest first, with marketplace:read; an unseen template is 404', async () => {
      const res = await get(`${TEMPLATES}/${pub.id}/review`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        templateId: pub.id, visibility: 'public', latestApprovedVersion: 2,
        versions: [2, 1].map((version) => ({ version, approvalStatus: 'approved', approvedBy: 'reviewer', approvedAt: expect.any(String) })),
      });
      // A person holds marketplace:read; a key needs it (or a wildcard covering it).
      expect((await get(`${TEMPLATES}/${pub.id}/review`, 'sess_gus')).status).toBe(200);
      const noScope = await get(`${TEMPLATES}/${pub.id}/review`, 'lk_t_write');
      expect(noScope.status).toBe(403);
      expect(noScope.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'marketplace:read', resourceType: 'template' });
      expect((await get(`${TEMPLATES}/${priv.id}/review`)).body).toEqual({ templateId: priv.id, visibility: 'private', versions: [] });
      expect((await get(`${TEMPLATES}/${globexPriv.id}/review`)).status).toBe(404);
    });
  });

  describe('manifest', () => {
    it('shows the latest version: skills, connections with their reconciliation, triggers, params and the seal', async () => {
      const res = await get(`${TEMPLATES}/${pub.id}/versions/1/manifest`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: pub.id, name: 'pub', displayName: 'Public', description: '', version: 1, latestVersion: 2, visibility: 'public',
        contentHash: expect.stringMatching(/^[0-9a-f]{64}$/), agent: {}, skills: [{ skillId: 'mks_crm' }],
        connections: [{ key: 'crm', type: 'crm', required: true }, { key: 'mail', type: 'email', required: false }],
        triggers: [{ key: 'daily', cron: '0 9 * * *' }, { key: 'inbound' }], params: [{ key: 'lang', value: 'en' }, { key: 'tone', default: 'warm' }],
        personaTemplate: { text: 'Hi ü 😀' }, channels: ['sms'], features: { voice: false }, onInstall: { workflow: 'setup' }, installPolicy: { perWorkspace: 'multiple' },
        latestApprovedVersion: 2, installable: true, deprecated: false,
        reconciliation: [{ key: 'crm', status: 'unmet-required', candidates: [] }, { key: 'mail', status: 'unmet-optional', candidates: [] }],
      });
      const latest = (await get(`${TEMPLATES}/${pub.id}/manifest`)).body;
      expect(latest).toMatchObject({ version: 2, latestVersion: 2, triggers: [], skills: [] });
      // The authored sections were inherited by version 2.
      expect(latest.connections).toHaveLength(2);
    });

    it('seals a version the same on every read (either route, any caller, with or without agentId or orgId); versions that differ differ', async () => {
      const seals = new Set<string>();
      for (const [path, token] of [
        [`${TEMPLATES}/${pub.id}/manifest`, 'lk_t_read'], [`${TEMPLATES}/${pub.id}/versions/2/manifest`, 'lk_t_read'],
        [`${TEMPLATES}/${pub.id}/manifest?agentId=agt_plain`, 'lk_t_write'], [`${TEMPLATES}/${pub.id}/manifest?orgId=org_acme`, 'sess_ann'],
        [`${TEMPLATES}/${pub.id}/versions/2/manifest`, 'lk_g_all'], [`${TEMPLATES}/${pub.id}/manifest`, 'lk_i_all'],
      ] as const) {
        const res = await get(path, token);
        expect(res.status, path).toBe(200);
        seals.add(res.body.contentHash);
      }
      expect(seals.size).toBe(1);
      const v1 = (await get(`${TEMPLATES}/${pub.id}/versions/1/manifest`)).body.contentHash;
      expect(seals.has(v1)).toBe(false);
      // A change elsewhere (the display name) is not the version's content: its seal stays.
      await call(app, 'PATCH', `${TEMPLATES}/${pub.id}`, { token: 'lk_t_write', body: { displayName: 'Public Bot' } });
      expect((await get(`${TEMPLATES}/${pub.id}/versions/1/manifest`)).body.contentHash).toBe(v1);
    });

    it('is what a client computes from the version object (docs/api-templates.md, "The seal"); the version\'s own contentHash is the content\'s', async () => {
      for (const n of [1, 2]) {
        const version = (await get(`${TEMPLATES}/${pub.id}/versions/${n}`)).body;
        const manifest = (await get(`${TEMPLATES}/${pub.id}/versions/${n}/manifest`)).body;
        expect(manifest.contentHash).toBe(clientSeal(version));
        expect(version.contentHash).not.toBe(manifest.contentHash);
        expect(version.contentHash).toBe(createHash('sha256').update(JSON.stringify(JSON.parse(JSON.stringify(version.content), (_k, v) =>
          v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v))).digest('hex'));
      }
    });

    it('answers 404 TEMPLATE_NO_VERSION for the latest manifest of a template without versions; 400 for a malformed agentId', async () => {
      const res = await get(`${TEMPLATES}/${priv.id}/manifest`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'TEMPLATE_NO_VERSION', message: `Template ${priv.id} has no version yet` });
      expect((await get(`${TEMPLATES}/${pub.id}/manifest?agentId=a%20b`)).status).toBe(400);
    });
  });

  describe('limits (spec 03 part 8)', () => {
    it('lists 60 a minute per client address, then answers a plain 429 with Retry-After; another address is not held', async () => {
      const address = freshAddress();
      const answers = [];
      for (let i = 0; i < 61; i++) answers.push(await get(TEMPLATES, 'lk_t_read', address));
      expect(answers.slice(0, 60).every((r) => r.status === 200)).toBe(true);
      const refused = answers[60]!;
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ statusCode: 429, message: expect.stringMatching(/^Rate limit of 60 requests a minute exceeded; retry in \d+ s\.$/) });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('x-ratelimit-limit-templates-catalog-list')).toBeNull();
      // The address, not the credential: another key from it is refused, the same key from elsewhere is not.
      expect((await get(TEMPLATES, 'lk_g_all', address)).status).toBe(429);
      expect((await call(app, 'GET', TEMPLATES, { address })).status).toBe(429);
      expect((await get(TEMPLATES, 'lk_t_read', freshAddress())).status).toBe(200);
      // The list budget is its own: detail reads from the address still pass.
      expect((await get(`${TEMPLATES}/${pub.id}`, 'lk_t_read', address)).status).toBe(200);
    });

    it('reads details, versions and manifests 20 a minute per client address, together', async () => {
      const address = freshAddress();
      const paths = [`${TEMPLATES}/${pub.id}`, `${TEMPLATES}/${pub.id}/manifest`, `${TEMPLATES}/${pub.id}/versions`, `${TEMPLATES}/${pub.id}/versions/1/manifest`, `${TEMPLATES}/${pub.id}/versions/1`];
      for (let i = 0; i < 20; i++) expect((await get(paths[i % paths.length]!, 'lk_t_read', address)).status).toBe(200);
      const refused = await get(`${TEMPLATES}/${pub.id}/manifest`, 'lk_t_read', address);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ statusCode: 429, message: expect.any(String) });
      expect(refused.headers.get('retry-after')).not.toBeNull();
      expect((await get(TEMPLATES, 'lk_t_read', address)).status).toBe(200);
      // Authoring routes are not catalog reads.
      expect((await call(app, 'PATCH', `${TEMPLATES}/${pub.id}`, { token: 'lk_t_write', body: { description: 'd' }, address })).status).toBe(200);
    });
  });
});

describe('agent templates: the catalog limit without a trusted proxy', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: TEMPLATES_SEED });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('keys on the socket\'s address: X-Forwarded-For is not believed unless TRUST_PROXY is set', async () => {
    const t = await createTemplate(app, 'lk_t_write', { creatorOrgId: 'org_acme', name: 'p', displayName: 'P', visibility: 'public' });
    // Every request names another forwarded address; all come from 127.0.0.1, which is what counts.
    for (let i = 0; i < 20; i++) expect((await call(app, 'GET', `${TEMPLATES}/${t.id}`, { token: 'lk_t_read' })).status).toBe(200);
    const refused = await call(app, 'GET', `${TEMPLATES}/${t.id}`, { token: 'lk_t_read' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ statusCode: 429, message: expect.any(String) });
  });
});
