/**
 * Marketplace skills (spec 03 part 4.5; contract skills): listing a source skill, versions (semver
 * order, duplicates, invalid strings), republish, unpublish and unlist cascades, PATCH, ownership
 * transfer, the catalogue reads and their visibility (public skills of every organization, the
 * caller organization's private ones, anything else 404 on every route).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { frameworkError, listSkill, publish, SKILLS, SKILLS_SEED } from '../../../helpers/skills.js';

describe('marketplace skills: listing, versions and the catalogue', () => {
  let app: TestApi;
  let crm: any;
  let globexPublic: any;
  let globexPrivate: any;
  let acmePrivate: any;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SKILLS_SEED });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('lists a source skill: name and description from it, the caller as creator, the contract defaults', async () => {
    crm = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_crm', displayName: 'CRM Lookup', category: 'crm', tags: ['crm', 'sales'], repositoryUrl: 'https://git.example.com/crm' });
    expect(crm).toEqual({
      id: expect.stringMatching(/^mks_/), name: 'crm-lookup', displayName: 'CRM Lookup', description: 'Looks a customer up in the CRM', category: 'crm',
      tags: ['crm', 'sales'], creatorId: 'usr_ann', creatorOrgId: 'org_acme', ownershipStatus: 'active', sourceSkillId: 'skl_crm', listed: true,
      visibility: 'public', verified: false, featured: false, published: false, installCount: 0, activeInstallCount: 0,
      repositoryUrl: 'https://git.example.com/crm', listedAt: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String),
      versions: [], versionsCount: 0, pendingVersionsCount: 0, approvedVersionsCount: 0,
    });
    const audit = await app.store.sql.query<any>("select action, org_id, target_id, details from audit_log where action = 'skills.skill.listed' and target_id = $1", [crm.id]);
    expect(audit).toEqual([{ action: 'skills.skill.listed', org_id: 'org_acme', target_id: crm.id, details: { sourceSkillId: 'skl_crm', name: 'crm-lookup', visibility: 'public' } }]);
  });

  it('refuses a second listing of the same source skill (409 SKILL_ALREADY_LISTED)', async () => {
    const res = await app.request('POST', `${SKILLS}/list`, { token: 'lk_s_write', body: { sourceSkillId: 'skl_crm', displayName: 'Again' } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ statusCode: 409, code: 'SKILL_ALREADY_LISTED', skillId: crm.id });
  });

  it('answers 404 for an unknown source skill and for another organization\'s, 400 without the required fields', async () => {
    for (const sourceSkillId of ['skl_nope', 'skl_globex']) {
      const res = await app.request('POST', `${SKILLS}/list`, { token: 'lk_s_write', body: { sourceSkillId, displayName: 'X' } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(frameworkError(404, `Skill ${sourceSkillId} not found`));
    }
    const missing = await app.request('POST', `${SKILLS}/list`, { token: 'lk_s_write', body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(frameworkError(400, expect.arrayContaining([expect.stringContaining('sourceSkillId'), expect.stringContaining('displayName')])));
    const visibility = await app.request('POST', `${SKILLS}/list`, { token: 'lk_s_write', body: { sourceSkillId: 'skl_spare', displayName: 'X', visibility: 'secret' } });
    expect(visibility.status).toBe(400);
  });

  it('publishes versions: approved and published at once, the skill published; listed newest first by semver precedence', async () => {
    const v1 = await publish(app, 'lk_s_write', crm.id, '1.0.0', { changelog: 'first', envVarsMetadata: { CRM_TOKEN: { description: 'API token', required: true, example: 'tok_...' } } });
    expect(v1).toEqual({
      id: expect.stringMatching(/^mksv_/), marketplaceSkillId: crm.id, version: '1.0.0', description: 'Looks a customer up in the CRM', changelog: 'first',
      envVarsMetadata: { CRM_TOKEN: { description: 'API token', required: true, example: 'tok_...' } }, approvalStatus: 'approved', published: true,
      approvedAt: expect.any(String), createdBy: 'usr_ann', createdAt: expect.any(String),
    });
    for (const v of ['1.10.0', '1.2.0', '2.0.0-beta.1', '1.9.0']) await publish(app, 'lk_s_write', crm.id, v);
    const versions = await app.request('GET', `${SKILLS}/${crm.id}/versions`, { token: 'lk_s_read' });
    expect(versions.status).toBe(200);
    // Lexical order would put 1.9.0 above 1.10.0 and 2.0.0-beta.1 first or last depending on the text.
    expect(versions.body.map((v: any) => v.version)).toEqual(['2.0.0-beta.1', '1.10.0', '1.9.0', '1.2.0', '1.0.0']);
    const withUnapproved = await app.request('GET', `${SKILLS}/${crm.id}/versions?includeUnapproved=true`, { token: 'lk_s_read' });
    expect(withUnapproved.body.map((v: any) => v.version)).toEqual(['2.0.0-beta.1', '1.10.0', '1.9.0', '1.2.0', '1.0.0']);
    expect((await app.request('GET', `${SKILLS}/${crm.id}/versions?includeUnapproved=maybe`, { token: 'lk_s_read' })).status).toBe(400);
    const skill = (await app.request('GET', `${SKILLS}/${crm.id}`, { token: 'lk_s_read' })).body;
    expect(skill).toMatchObject({ published: true, versionsCount: 5, approvedVersionsCount: 5, pendingVersionsCount: 0 });
    expect(skill.versions.map((v: any) => v.version)).toEqual(['2.0.0-beta.1', '1.10.0', '1.9.0', '1.2.0', '1.0.0']);
  });

  it('refuses a version string published twice (409 SKILL_VERSION_EXISTS), also when the requests race', async () => {
    const again = await app.request('POST', `${SKILLS}/${crm.id}/versions/publish`, { token: 'lk_s_write', body: { version: '1.2.0' } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ statusCode: 409, error: 'Conflict', code: 'SKILL_VERSION_EXISTS', message: expect.any(String), version: '1.2.0' });
    const racing = await Promise.all(Array.from({ length: 6 }, () => app.request('POST', `${SKILLS}/${crm.id}/versions/publish`, { token: 'lk_s_write', body: { version: '3.0.0' } })));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const versions = (await app.request('GET', `${SKILLS}/${crm.id}/versions`, { token: 'lk_s_read' })).body;
    expect(versions.filter((v: any) => v.version === '3.0.0')).toHaveLength(1);
  });

  it('refuses a version that is not a semantic version (400)', async () => {
    for (const version of ['v1.0.0', '1.0', 'latest', '1.0.0+build.1', '01.0.0', ' 1.0.0', '']) {
      const res = await app.request('POST', `${SKILLS}/${crm.id}/versions/publish`, { token: 'lk_s_write', body: { version } });
      expect(res.status, version).toBe(400);
      expect(res.body, version).toEqual(frameworkError(400));
    }
  });

  it('unpublishes one version (the skill stays listed while another is published); 404 for an unknown version, 409 for one not published', async () => {
    const versions = (await app.request('GET', `${SKILLS}/${crm.id}/versions`, { token: 'lk_s_read' })).body;
    const v100 = versions.find((v: any) => v.version === '1.0.0');
    const res = await app.request('PUT', `${SKILLS}/${crm.id}/unpublish`, { token: 'lk_s_write', body: { version: '1.0.0' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String), skillUnlisted: false, versionId: v100.id });
    const skill = (await app.request('GET', `${SKILLS}/${crm.id}`, { token: 'lk_s_read' })).body;
    expect(skill).toMatchObject({ listed: true, published: true });
    expect(skill.versions.find((v: any) => v.version === '1.0.0').published).toBe(false);
    const unknown = await app.request('PUT', `${SKILLS}/${crm.id}/unpublish`, { token: 'lk_s_write', body: { version: '9.9.9' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(frameworkError(404));
    const twice = await app.request('PUT', `${SKILLS}/${crm.id}/unpublish`, { token: 'lk_s_write', body: { version: '1.0.0' } });
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ code: 'SKILL_VERSION_NOT_PUBLISHED', version: '1.0.0' });
    expect((await app.request('PUT', `${SKILLS}/${crm.id}/unpublish`, { token: 'lk_s_write', body: {} })).status).toBe(400);
  });

  it('unlists: every published version unpublished (their number answered), the skill neither listed nor published; republishing one lists it again', async () => {
    const res = await app.request('PUT', `${SKILLS}/${crm.id}/unlist`, { token: 'lk_s_write' });
    expect(res.status).toBe(200);
    // Six versions, 1.0.0 unpublished above: five published.
    expect(res.body).toEqual({ success: true, message: expect.any(String), unlisted: true, versionsUnpublished: 5 });
    const skill = (await app.request('GET', `${SKILLS}/${crm.id}`, { token: 'lk_s_read' })).body;
    expect(skill).toMatchObject({ listed: false, published: false });
    expect(skill.versions.every((v: any) => v.published === false)).toBe(true);
    const v110 = skill.versions.find((v: any) => v.version === '1.10.0');
    const again = await app.request('PUT', `${SKILLS}/${crm.id}/versions/${v110.id}/publish`, { token: 'lk_s_write' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: v110.id, version: '1.10.0', published: true });
    expect((await app.request('GET', `${SKILLS}/${crm.id}`, { token: 'lk_s_read' })).body).toMatchObject({ listed: true, published: true });
    const unknown = await app.request('PUT', `${SKILLS}/${crm.id}/versions/mksv_nope/publish`, { token: 'lk_s_write' });
    expect(unknown.status).toBe(404);
    const actions = (await app.store.sql.query<{ action: string }>('select action from audit_log where target_id = $1 order by at, id', [crm.id])).map((r) => r.action);
    expect(new Set(actions)).toEqual(new Set(['skills.skill.listed', 'skills.version.published', 'skills.version.unpublished', 'skills.skill.unlisted', 'skills.version.republished']));
  });

  it('unpublishing the last published version also unlists the skill (skillUnlisted true)', async () => {
    const weather = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_weather', displayName: 'Weather', category: 'utility' });
    const v = await publish(app, 'lk_s_write', weather.id, '0.1.0');
    const res = await app.request('PUT', `${SKILLS}/${weather.id}/unpublish`, { token: 'lk_s_write', body: { version: '0.1.0' } });
    expect(res.body).toEqual({ success: true, message: expect.any(String), skillUnlisted: true, versionId: v.id });
    expect((await app.request('GET', `${SKILLS}/${weather.id}`, { token: 'lk_s_read' })).body).toMatchObject({ listed: false, published: false });
    // Publishing a new version lists it again.
    await publish(app, 'lk_s_write', weather.id, '0.2.0');
    expect((await app.request('GET', `${SKILLS}/${weather.id}`, { token: 'lk_s_read' })).body).toMatchObject({ listed: true, published: true });
  });

  it('PATCH changes the listing\'s fields and nothing else; unknown fields and bad values are 400', async () => {
    const res = await app.request('PATCH', `${SKILLS}/${crm.id}`, { token: 'lk_s_write', body: { displayName: 'CRM Lookup Pro', description: 'Finds customers fast', tags: ['crm'], iconUrl: 'https://cdn.example.com/i.png', screenshots: ['https://cdn.example.com/1.png'] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: crm.id, name: 'crm-lookup', displayName: 'CRM Lookup Pro', description: 'Finds customers fast', tags: ['crm'], category: 'crm', iconUrl: 'https://cdn.example.com/i.png', screenshots: ['https://cdn.example.com/1.png'] });
    for (const body of [{ name: 'renamed' }, { displayName: '' }, { tags: 'crm' }, { iconUrl: 'javascript:alert(1)' }, { visibility: 'private' }]) {
      const bad = await app.request('PATCH', `${SKILLS}/${crm.id}`, { token: 'lk_s_write', body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const audit = await app.store.sql.query<any>("select details from audit_log where action = 'skills.skill.updated' and target_id = $1", [crm.id]);
    expect(audit).toEqual([{ details: { fields: ['displayName', 'description', 'tags', 'iconUrl', 'screenshots'] } }]);
  });

  it('shows a private skill to its organization only: 404 on every route for anyone else', async () => {
    acmePrivate = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_private', displayName: 'Internal', visibility: 'private' });
    await publish(app, 'lk_s_write', acmePrivate.id, '1.0.0');
    globexPublic = await listSkill(app, 'lk_g_all', { sourceSkillId: 'skl_globex', displayName: 'Globex Search' });
    globexPrivate = await listSkill(app, 'lk_g_all', { sourceSkillId: 'skl_globex_private', displayName: 'Globex Secret', visibility: 'private' });
    const v = await publish(app, 'lk_g_all', globexPrivate.id, '1.0.0');
    expect((await app.request('GET', `${SKILLS}/${acmePrivate.id}`, { token: 'sess_max' })).status).toBe(200);
    expect((await app.request('GET', `${SKILLS}/${globexPublic.id}`, { token: 'lk_s_read' })).status).toBe(200);
    const hidden = [
      ['GET', `${SKILLS}/${globexPrivate.id}`, undefined],
      ['GET', `${SKILLS}/${globexPrivate.id}/versions`, undefined],
      ['PATCH', `${SKILLS}/${globexPrivate.id}`, { displayName: 'x' }],
      ['POST', `${SKILLS}/${globexPrivate.id}/versions/publish`, { version: '9.0.0' }],
      ['PUT', `${SKILLS}/${globexPrivate.id}/versions/${v.id}/publish`, undefined],
      ['PUT', `${SKILLS}/${globexPrivate.id}/unpublish`, { version: '1.0.0' }],
      ['PUT', `${SKILLS}/${globexPrivate.id}/unlist`, undefined],
      ['PUT', `${SKILLS}/${globexPrivate.id}/owner`, { newOrgId: 'org_acme' }],
      ['POST', `/marketplace/install/${globexPrivate.id}/agt_s1`, {}],
      ['PUT', `/marketplace/install/${globexPrivate.id}/agt_s1`, {}],
      ['DELETE', `/marketplace/install/${globexPrivate.id}/agt_s1`, undefined],
      ['GET', `${SKILLS}/mks_nonexistent`, undefined],
    ] as const;
    for (const [method, path, body] of hidden) {
      for (const token of ['lk_acme_legacy', 'sess_ann', 'lk_s_all']) {
        const res = await app.request(method, path, { token, ...(body !== undefined ? { body } : {}) });
        expect(res.status, `${token} ${method} ${path}`).toBe(404);
        expect(res.body).toEqual(frameworkError(404, expect.stringMatching(/^Marketplace skill \S+ not found$/)));
      }
    }
    // The owner still sees it, unchanged.
    expect((await app.request('GET', `${SKILLS}/${globexPrivate.id}`, { token: 'sess_gus' })).body).toMatchObject({ displayName: 'Globex Secret', published: true, listed: true });
  });

  it('refuses changes to another organization\'s public skill (403, nothing changed)', async () => {
    for (const [method, path, body] of [
      ['PATCH', `${SKILLS}/${globexPublic.id}`, { displayName: 'hijacked' }],
      ['POST', `${SKILLS}/${globexPublic.id}/versions/publish`, { version: '6.6.6' }],
      ['PUT', `${SKILLS}/${globexPublic.id}/unlist`, undefined],
      ['PUT', `${SKILLS}/${globexPublic.id}/owner`, { newOrgId: 'org_acme' }],
    ] as const) {
      const res = await app.request(method, path, { token: 'sess_ann', ...(body !== undefined ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toMatchObject({ statusCode: 403, code: 'RESOURCE_NOT_PROJECTED', resourceType: 'marketplaceSkill', resourceId: globexPublic.id });
    }
    expect((await app.request('GET', `${SKILLS}/${globexPublic.id}`, { token: 'sess_gus' })).body).toMatchObject({ displayName: 'Globex Search', listed: true, versionsCount: 0, creatorOrgId: 'org_globex' });
  });

  it('transfers ownership with org:manage on the creator organization to an existing organization', async () => {
    const spare = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_spare', displayName: 'Spare', visibility: 'private' });
    const noManage = await app.request('PUT', `${SKILLS}/${spare.id}/owner`, { token: 'lk_s_all', body: { newOrgId: 'org_initech' } });
    expect(noManage.status).toBe(403);
    expect(noManage.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'org:manage', resourceId: spare.id });
    // A member holds every scope but org:manage.
    expect((await app.request('PUT', `${SKILLS}/${spare.id}/owner`, { token: 'sess_max', body: { newOrgId: 'org_initech' } })).status).toBe(403);
    const nowhere = await app.request('PUT', `${SKILLS}/${spare.id}/owner`, { token: 'sess_ann', body: { newOrgId: 'org_nope' } });
    expect(nowhere.status).toBe(404);
    expect(nowhere.body).toEqual(frameworkError(404, 'Organization org_nope not found'));
    expect((await app.request('PUT', `${SKILLS}/${spare.id}/owner`, { token: 'sess_ann', body: {} })).status).toBe(400);
    const moved = await app.request('PUT', `${SKILLS}/${spare.id}/owner`, { token: 'lk_s_manage', body: { newOrgId: 'org_initech' } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: spare.id, creatorOrgId: 'org_initech', creatorId: 'usr_ann' });
    // Private and now Initech's: Acme no longer sees it.
    expect((await app.request('GET', `${SKILLS}/${spare.id}`, { token: 'sess_ann' })).status).toBe(404);
    const audit = await app.store.sql.query<any>("select org_id, details from audit_log where action = 'skills.skill.transferred' and target_id = $1", [spare.id]);
    expect(audit).toEqual([{ org_id: 'org_acme', details: { fromOrgId: 'org_acme', toOrgId: 'org_initech' } }]);
  });

  it('lists the caller\'s own skills and an organization\'s visible skills', async () => {
    const mine = await app.request('GET', '/marketplace/creator/skills', { token: 'lk_s_read' });
    expect(mine.status).toBe(200);
    expect(mine.body.map((s: any) => s.sourceSkillId).sort()).toEqual(['skl_crm', 'skl_private', 'skl_weather']);
    expect((await app.request('GET', '/marketplace/creator/skills', { token: 'sess_gus' })).body.map((s: any) => s.sourceSkillId).sort()).toEqual(['skl_globex', 'skl_globex_private']);
    expect((await app.request('GET', '/marketplace/creator/skills', { token: 'sess_max' })).body).toEqual([]);
    const globexFromAcme = await app.request('GET', '/marketplace/orgs/org_globex/skills', { token: 'lk_s_none' });
    expect(globexFromAcme.status).toBe(200);
    expect(globexFromAcme.body.map((s: any) => s.id)).toEqual([globexPublic.id]);
    expect((await app.request('GET', '/marketplace/orgs/org_globex/skills', { token: 'sess_gus' })).body.map((s: any) => s.id).sort()).toEqual([globexPublic.id, globexPrivate.id].sort());
    expect((await app.request('GET', '/marketplace/orgs/org_acme/skills', { token: 'lk_g_all' })).body.some((s: any) => s.visibility === 'private')).toBe(false);
    expect((await app.request('GET', '/marketplace/orgs/org_nope/skills', { token: 'sess_gus' })).body).toEqual([]);
  });
});
