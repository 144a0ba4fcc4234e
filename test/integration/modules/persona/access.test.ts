/**
 * Who may use the persona routes (spec 03 part 5; contract P2-P5): `agents:read` for reads,
 * `agents:write` for changes and enhance, `agents:manage` to discard a draft, on the agent in the
 * path; the preset catalog for any credential. Missing scope: 403 `Insufficient permissions`; an
 * agent a scoped key cannot see: RESOURCE_NOT_PROJECTED; one a person cannot see: 404 `SubAgent not found`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { agentPath, PERSONA_SEED, PRESETS } from '../../../helpers/persona.js';

type Scope = 'agents:read' | 'agents:write' | 'agents:manage';
const ROUTES: { method: string; path: string; body?: unknown; scope: Scope }[] = [
  { method: 'GET', path: '/persona/versions', scope: 'agents:read' },
  { method: 'GET', path: '/persona/version/1', scope: 'agents:read' },
  { method: 'POST', path: '/persona/version', body: { persona: 'p' }, scope: 'agents:write' },
  { method: 'POST', path: '/persona/version/1', scope: 'agents:write' },
  { method: 'POST', path: '/persona', body: { agentName: 'a' }, scope: 'agents:write' },
  { method: 'POST', path: '/persona/draft', body: { agentName: 'a' }, scope: 'agents:write' },
  { method: 'PUT', path: '/persona/draft', body: { agentName: 'b' }, scope: 'agents:write' },
  { method: 'POST', path: '/persona/publish', body: { version: 1 }, scope: 'agents:write' },
  { method: 'DELETE', path: '/persona/draft', scope: 'agents:manage' },
  { method: 'POST', path: '/persona/preset/apply', body: { presetId: 'pre_support' }, scope: 'agents:write' },
  { method: 'POST', path: '/enhance/website', body: { websiteUrl: 'https://example.com' }, scope: 'agents:write' },
  { method: 'POST', path: '/enhance/storytelling', body: {}, scope: 'agents:write' },
  { method: 'POST', path: '/enhance/instructions', body: { instructions: 'Be brief.' }, scope: 'agents:write' },
];

describe('persona access', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: PERSONA_SEED });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const call = (token: string | undefined, agentId: string, r: (typeof ROUTES)[number]) =>
    app.request(r.method, `${agentPath(agentId)}${r.path}`, { ...(token ? { token } : {}), ...(r.body !== undefined ? { body: r.body } : {}) });
  /** Past the access check: whatever the route then answers, it is not an authentication or access refusal. */
  const allowed = (res: { status: number; body: any }): boolean =>
    res.status !== 401 && res.status !== 403 && !(res.status === 404 && res.body?.message === 'SubAgent not found');

  const insufficient = (agentId: string, scope: Scope) => ({
    statusCode: 403, error: 'Forbidden', code: 'INSUFFICIENT_SCOPE', message: 'Insufficient permissions', resourceType: 'agent', resourceId: agentId, requiredScope: scope,
  });

  const grants: { token: string; holds: (s: Scope) => boolean }[] = [
    { token: 'lk_p_read', holds: (s) => s === 'agents:read' },
    { token: 'lk_p_write', holds: (s) => s === 'agents:write' },
    { token: 'lk_p_manage', holds: (s) => s === 'agents:manage' },
    { token: 'lk_p_all', holds: () => true },
    { token: 'lk_p_star', holds: () => true },
    // `*:read` covers agents:read only.
    { token: 'lk_acme_wild', holds: (s) => s === 'agents:read' },
    { token: 'lk_acme_manage', holds: () => false },
    // People: an admin's session and legacy key, a member's session.
    { token: 'sess_ann', holds: () => true },
    { token: 'lk_acme_legacy', holds: () => true },
    { token: 'sess_max', holds: () => true },
  ];

  for (const g of grants) {
    it(`${g.token}: each route with the scope it holds, 403 Insufficient permissions naming the one it lacks`, async () => {
      for (const r of ROUTES) {
        const res = await call(g.token, 'agt_p8', r);
        if (g.holds(r.scope)) expect(allowed(res), `${g.token} ${r.method} ${r.path}: ${res.status} ${JSON.stringify(res.body)}`).toBe(true);
        else expect(res.body, `${g.token} ${r.method} ${r.path}`).toEqual(insufficient('agt_p8', r.scope));
      }
    });
  }

  it('a scoped key on an agent it cannot see (private without a grant, another organization\'s, nonexistent) gets the same RESOURCE_NOT_PROJECTED', async () => {
    for (const agentId of ['agt_sales', 'agt_globex', 'agt_nonexistent']) {
      for (const r of ROUTES) {
        const res = await call('lk_p_all', agentId, r);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', code: 'RESOURCE_NOT_PROJECTED', message: expect.any(String), resourceType: 'agent', resourceId: agentId, requiredScope: r.scope });
      }
    }
    // A grant makes the private agent visible.
    expect(allowed(await call('lk_p_private', 'agt_sales', ROUTES[0]!))).toBe(true);
  });

  it('a person on an agent that does not exist or is of an organization it is not a member of gets 404 SubAgent not found', async () => {
    const cases: [string, string][] = [['sess_ann', 'agt_nonexistent'], ['sess_ann', 'agt_globex'], ['lk_acme_legacy', 'agt_nonexistent'], ['sess_gus', 'agt_p8'], ['lk_p_globex_legacy', 'agt_p8']];
    for (const [token, agentId] of cases) {
      for (const r of ROUTES) {
        const res = await call(token, agentId, r);
        expect(res.status, `${token} ${agentId} ${r.method} ${r.path}`).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'SubAgent not found' });
      }
    }
  });

  it('no credential: 401 on every route, the preset catalog included', async () => {
    for (const r of ROUTES) {
      const res = await call(undefined, 'agt_p8', r);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'No token provided' });
    }
    for (const path of [PRESETS, `${PRESETS}/pre_support`]) {
      expect((await app.request('GET', path)).status).toBe(401);
      expect((await app.request('GET', path, { token: 'lk_nope' })).body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'Invalid or expired token' });
    }
  });

  it('the preset catalog takes any valid credential, whatever its scopes', async () => {
    for (const token of ['lk_acme_ingest', 'lk_acme_manage', 'lk_p_read', 'sess_ann', 'lk_acme_legacy', 'lk_p_globex', 'sess_gus']) {
      expect((await app.request('GET', PRESETS, { token })).status, token).toBe(200);
      expect((await app.request('GET', `${PRESETS}/pre_support`, { token })).status, token).toBe(200);
    }
  });

  it('a refused request changes nothing', async () => {
    for (const token of ['lk_p_read', 'lk_acme_manage', 'lk_p_manage']) {
      for (const r of ROUTES.filter((x) => x.scope === 'agents:write')) expect((await call(token, 'agt_p10', r)).status).toBe(403);
    }
    const count = async (table: string) => (await app.store.sql.query<{ n: number }>(`select count(*)::int as n from ${table} where agent_id = 'agt_p10'`))[0]!.n;
    expect(await count('persona_versions')).toBe(0);
    expect(await count('persona_agents')).toBe(0);
    expect(await app.store.sql.query("select 1 from audit_log where target_id = 'agt_p10'")).toEqual([]);
  });
});
