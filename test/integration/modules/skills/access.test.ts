/**
 * Who may use the marketplace skill routes (spec 03 part 5; contract skills, scopes): changes to a
 * skill take `automations:write` on its creator organization (ownership: `org:manage`); installs
 * `automations:write` on the agent, the installations read `automations:read` (an agent the key
 * cannot see: 403 RESOURCE_NOT_PROJECTED); the catalogue reads any valid credential. Wildcards
 * (`automations:*`, `*:read`) cover these scopes: none is sensitive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { listSkill, publish, SKILLS, SKILLS_SEED } from '../../../helpers/skills.js';

type Scope = 'automations:write' | 'automations:read' | 'org:manage';

describe('marketplace skill access', () => {
  let app: TestApi;
  let id: string;
  let versionId: string;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SKILLS_SEED });
    id = (await listSkill(app, 'sess_ann', { sourceSkillId: 'skl_access', displayName: 'Access' })).id;
    versionId = (await publish(app, 'sess_ann', id, '1.0.0')).id;
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** Routes on the skill, each with the scope it needs; answers past the access check may be anything but 401/403. */
  const skillRoutes = (): { method: string; path: string; body?: unknown; scope: Scope }[] => [
    { method: 'POST', path: `${SKILLS}/${id}/versions/publish`, body: { version: '1.0.0' }, scope: 'automations:write' },
    { method: 'PUT', path: `${SKILLS}/${id}/versions/${versionId}/publish`, scope: 'automations:write' },
    { method: 'PUT', path: `${SKILLS}/${id}/unpublish`, body: { version: '0.0.1' }, scope: 'automations:write' },
    { method: 'PATCH', path: `${SKILLS}/${id}`, body: {}, scope: 'automations:write' },
    { method: 'PUT', path: `${SKILLS}/${id}/owner`, body: { newOrgId: 'org_nope' }, scope: 'org:manage' },
    { method: 'POST', path: `${SKILLS}/list`, body: { sourceSkillId: 'skl_access', displayName: 'Again' }, scope: 'automations:write' },
    // Last: the next credential's republish (above) publishes the version again.
    { method: 'PUT', path: `${SKILLS}/${id}/unlist`, scope: 'automations:write' },
  ];
  const agentRoutes = (agentId: string): { method: string; path: string; body?: unknown; scope: Scope }[] => [
    { method: 'POST', path: `/marketplace/install/${id}/${agentId}`, body: { version: '9.9.9' }, scope: 'automations:write' },
    { method: 'PUT', path: `/marketplace/install/${id}/${agentId}`, body: {}, scope: 'automations:write' },
    { method: 'DELETE', path: `/marketplace/install/${id}/${agentId}`, scope: 'automations:write' },
    { method: 'GET', path: `/marketplace/installations/${agentId}`, scope: 'automations:read' },
  ];
  const call = (token: string, r: { method: string; path: string; body?: unknown }) => app.request(r.method, r.path, { token, ...(r.body !== undefined ? { body: r.body } : {}) });
  const allowed = (res: { status: number }) => res.status !== 401 && res.status !== 403;

  const grants: { token: string; holds: (s: Scope) => boolean }[] = [
    { token: 'lk_s_write', holds: (s) => s === 'automations:write' },
    { token: 'lk_s_read', holds: (s) => s === 'automations:read' },
    { token: 'lk_s_all', holds: (s) => s !== 'org:manage' },
    { token: 'lk_s_star_read', holds: (s) => s === 'automations:read' },
    { token: 'lk_s_none', holds: () => false },
    { token: 'lk_s_manage', holds: (s) => s === 'org:manage' },
    // People: an admin holds every scope, a member every one but org:manage.
    { token: 'sess_ann', holds: () => true },
    { token: 'lk_acme_legacy', holds: () => true },
    { token: 'sess_max', holds: (s) => s !== 'org:manage' },
  ];

  for (const g of grants) {
    it(`${g.token}: each route with the scope it holds; 403 INSUFFICIENT_SCOPE naming the one it lacks`, async () => {
      for (const r of [...skillRoutes(), ...agentRoutes('agt_s1')]) {
        const res = await call(g.token, r);
        if (g.holds(r.scope)) {
          expect(allowed(res), `${g.token} ${r.method} ${r.path}: ${res.status} ${JSON.stringify(res.body)}`).toBe(true);
        } else {
          expect(res.status, `${g.token} ${r.method} ${r.path}`).toBe(403);
          expect(res.body, `${g.token} ${r.method} ${r.path}`).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: r.scope });
        }
      }
    });
  }

  it('refuses a key on an agent it cannot see (private without a grant, another organization\'s, nonexistent) with RESOURCE_NOT_PROJECTED', async () => {
    for (const agentId of ['agt_s_private', 'agt_g1', 'agt_nonexistent']) {
      for (const r of agentRoutes(agentId)) {
        const res = await call('lk_s_all', r);
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', code: 'RESOURCE_NOT_PROJECTED', message: expect.any(String), resourceType: 'agent', resourceId: agentId, requiredScope: r.scope });
      }
    }
    // A grant makes the private agent visible (the version published again: the last credential above unlisted the skill).
    expect((await call('sess_ann', { method: 'PUT', path: `${SKILLS}/${id}/versions/${versionId}/publish` })).status).toBe(200);
    const res = await call('lk_s_grant', { method: 'POST', path: `/marketplace/install/${id}/agt_s_private`, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await call('lk_s_grant', { method: 'GET', path: '/marketplace/installations/agt_s_private' })).body).toHaveLength(1);
  });

  it('serves the catalogue reads to any valid credential, 401 without one', async () => {
    const reads = [SKILLS, `${SKILLS}/${id}`, `${SKILLS}/${id}/versions`, '/marketplace/creator/skills', '/marketplace/orgs/org_acme/skills'];
    for (const path of reads) {
      expect((await app.request('GET', path, { token: 'lk_s_none' })).status, path).toBe(200);
      expect((await app.request('GET', path, { token: 'lk_g_all' })).status, path).toBe(200);
      const anonymous = await app.request('GET', path);
      expect(anonymous.status, path).toBe(401);
      expect(anonymous.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'No token provided' });
    }
  });

  it('changes nothing when refused', async () => {
    const skill = (await app.request('GET', `${SKILLS}/${id}`, { token: 'sess_ann' })).body;
    expect(skill).toMatchObject({ displayName: 'Access', creatorOrgId: 'org_acme', versionsCount: 1 });
    // One entry per allowed change: five credentials hold automations:write (republish, PATCH, unlist each), one republish more above.
    const rows = await app.store.sql.query<{ action: string; n: number }>('select action, count(*)::int as n from audit_log where target_id = $1 group by action order by action', [id]);
    expect(rows).toEqual([
      { action: 'skills.skill.listed', n: 1 }, { action: 'skills.skill.unlisted', n: 5 }, { action: 'skills.skill.updated', n: 5 },
      { action: 'skills.version.published', n: 1 }, { action: 'skills.version.republished', n: 6 },
    ]);
  });
});
