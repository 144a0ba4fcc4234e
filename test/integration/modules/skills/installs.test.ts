/**
 * Installing marketplace skills on agents (spec 03 parts 4.5 and 9.4; contract skills): install
 * (the newest published version unless one is named), update, uninstall and the agent's
 * installations; `installCount` and `activeInstallCount` exact under concurrent installs; env
 * values sealed at rest and never in an answer, an audit entry or a log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recentAppLogs } from '../../../helpers/app.js';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { frameworkError, listSkill, publish, SKILLS, SKILLS_SEED } from '../../../helpers/skills.js';

const SECRET = 'sk-live-7d1e4f0a9c2b-do-not-leak';
const SECRET_2 = 'rotated-0c8f1a77e2-also-secret';

describe('marketplace skill installs', () => {
  let app: TestApi;
  let skill: any;
  let other: any;
  const install = (method: string, id: string, agentId: string, body?: unknown, token = 'lk_s_write') =>
    app.request(method, `/marketplace/install/${id}/${agentId}`, { token, ...(body !== undefined ? { body } : {}) });
  const counts = async (id: string) => {
    const s = (await app.request('GET', `${SKILLS}/${id}`, { token: 'lk_s_read' })).body;
    return { installCount: s.installCount, activeInstallCount: s.activeInstallCount };
  };
  /** Every answer this suite received, to search for the env values. */
  const answers: string[] = [];
  const keep = <T extends { body: unknown; headers: Headers }>(res: T): T => {
    answers.push(JSON.stringify(res.body), JSON.stringify([...res.headers]));
    return res;
  };

  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SKILLS_SEED });
    skill = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_install', displayName: 'Installer' });
    for (const v of ['1.0.0', '1.10.0', '1.9.0', '2.0.0-rc.1']) await publish(app, 'lk_s_write', skill.id, v, { envVarsMetadata: { API_KEY: { description: 'key', required: false } } });
    other = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_install2', displayName: 'Installer Two' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('installs the newest published version by default (semver, not text order), env values not in the answer', async () => {
    const res = keep(await install('POST', skill.id, 'agt_s1', { envValues: { API_KEY: SECRET } }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({ marketplaceSkillId: skill.id, agentId: 'agt_s1', version: '2.0.0-rc.1', installedAt: expect.any(String) });
    expect(await counts(skill.id)).toEqual({ installCount: 1, activeInstallCount: 1 });
    const named = keep(await install('POST', skill.id, 'agt_s2', { version: '1.9.0' }));
    expect(named.status).toBe(201);
    expect(named.body.version).toBe('1.9.0');
  });

  it('answers 409 for a skill already installed on the agent, 404 for an unknown version, 409 for an unpublished one or a skill without any', async () => {
    const again = keep(await install('POST', skill.id, 'agt_s1', { envValues: { API_KEY: SECRET } }));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ statusCode: 409, code: 'SKILL_ALREADY_INSTALLED', agentId: 'agt_s1' });
    const unknown = await install('POST', skill.id, 'agt_s3', { version: '7.0.0' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(frameworkError(404));
    expect((await app.request('PUT', `${SKILLS}/${skill.id}/unpublish`, { token: 'lk_s_write', body: { version: '1.0.0' } })).status).toBe(200);
    const unpublished = await install('POST', skill.id, 'agt_s3', { version: '1.0.0' });
    expect(unpublished.status).toBe(409);
    expect(unpublished.body).toMatchObject({ code: 'SKILL_VERSION_NOT_PUBLISHED', version: '1.0.0' });
    const none = await install('POST', other.id, 'agt_s3', {});
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({ code: 'SKILL_VERSION_NOT_PUBLISHED', version: null });
    expect((await install('POST', skill.id, 'agt_s3', { version: 'latest' })).status).toBe(404);
    expect((await install('POST', skill.id, 'agt_s3', { envValues: { API_KEY: 5 } })).status).toBe(400);
    expect((await install('POST', skill.id, 'agt_s3', { envValues: { 'bad name': 'x' } })).status).toBe(400);
    expect(await counts(skill.id)).toEqual({ installCount: 2, activeInstallCount: 2 });
  });

  it('PUT moves an install to another published version and replaces env values; 404 when not installed', async () => {
    const res = keep(await install('PUT', skill.id, 'agt_s1', { version: '1.10.0', envValues: { API_KEY: SECRET_2 } }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ marketplaceSkillId: skill.id, agentId: 'agt_s1', version: '1.10.0', installedAt: expect.any(String) });
    // Without a version the installed one stays.
    expect(keep(await install('PUT', skill.id, 'agt_s1', {})).body.version).toBe('1.10.0');
    expect((await install('PUT', skill.id, 'agt_s1', { version: '1.0.0' })).status).toBe(409);
    const missing = await install('PUT', skill.id, 'agt_s4', {});
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(frameworkError(404, `Marketplace skill ${skill.id} is not installed on agent agt_s4`));
    expect(await counts(skill.id)).toEqual({ installCount: 2, activeInstallCount: 2 });
  });

  it('refuses an install without a value for a required env variable (400 naming it), and a move to a version that requires one the install lacks', async () => {
    const strict = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_install3', displayName: 'Strict' });
    await publish(app, 'lk_s_write', strict.id, '1.0.0', { envVarsMetadata: { REGION: { description: 'region', required: false } } });
    await publish(app, 'lk_s_write', strict.id, '2.0.0', { envVarsMetadata: { TOKEN: { description: 'token', required: true }, REGION: { description: 'region', required: false } } });
    const bare = await install('POST', strict.id, 'agt_s5', {});
    expect(bare.status).toBe(400);
    expect(bare.body).toEqual(frameworkError(400, `Version 2.0.0 of marketplace skill ${strict.id} requires a value for TOKEN`));
    expect(await counts(strict.id)).toEqual({ installCount: 0, activeInstallCount: 0 });
    expect((await install('POST', strict.id, 'agt_s5', { envValues: { TOKEN: SECRET } })).status).toBe(201);
    expect((await install('POST', strict.id, 'agt_s6', { version: '1.0.0' })).status).toBe(201);
    // agt_s6 holds no TOKEN: moving it to 2.0.0 needs one, sent or kept.
    expect((await install('PUT', strict.id, 'agt_s6', { version: '2.0.0' })).status).toBe(400);
    expect((await install('PUT', strict.id, 'agt_s6', { version: '2.0.0', envValues: { TOKEN: SECRET_2 } })).status).toBe(200);
    expect((await install('PUT', strict.id, 'agt_s6', { version: '1.0.0' })).status).toBe(200);
    expect((await install('PUT', strict.id, 'agt_s6', { version: '2.0.0' })).status).toBe(200);
  });

  it('lists the agent\'s installations, and DELETE returns the removed install (active count down, install count kept)', async () => {
    const list = keep(await app.request('GET', '/marketplace/installations/agt_s1', { token: 'lk_s_read' }));
    expect(list.status).toBe(200);
    expect(list.body).toEqual([{ marketplaceSkillId: skill.id, agentId: 'agt_s1', version: '1.10.0', installedAt: expect.any(String) }]);
    const removed = keep(await install('DELETE', skill.id, 'agt_s2'));
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ marketplaceSkillId: skill.id, agentId: 'agt_s2', version: '1.9.0', installedAt: expect.any(String) });
    expect((await install('DELETE', skill.id, 'agt_s2')).status).toBe(404);
    expect((await app.request('GET', '/marketplace/installations/agt_s2', { token: 'lk_s_read' })).body).toEqual([]);
    expect(await counts(skill.id)).toEqual({ installCount: 2, activeInstallCount: 1 });
    // Installed again: every install counts.
    expect((await install('POST', skill.id, 'agt_s2', {})).status).toBe(201);
    expect(await counts(skill.id)).toEqual({ installCount: 3, activeInstallCount: 2 });
  });

  it('counts concurrent installs exactly: one per agent, and one of many racing on the same agent', async () => {
    const agents = ['agt_s3', 'agt_s4', 'agt_s5', 'agt_s6', 'agt_s7', 'agt_s8', 'agt_s9', 'agt_s10'];
    const before = await counts(skill.id);
    const many = await Promise.all(agents.map((a) => install('POST', skill.id, a, { envValues: { API_KEY: SECRET } })));
    expect(many.map((r) => r.status)).toEqual(agents.map(() => 201));
    const racing = await Promise.all(Array.from({ length: 6 }, () => install('POST', skill.id, 'agt_s11', {})));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const removals = await Promise.all(agents.slice(0, 4).map((a) => install('DELETE', skill.id, a)));
    expect(removals.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await counts(skill.id)).toEqual({ installCount: before.installCount + 9, activeInstallCount: before.activeInstallCount + 9 - 4 });
    const rows = await app.store.sql.query<{ n: number }>('select count(*)::int as n from skills_installs where skill_id = $1', [skill.id]);
    expect(rows[0]!.n).toBe(before.activeInstallCount + 9 - 4);
  });

  it('takes an Idempotency-Key on POST: a retry gets the first answer again and installs nothing more; the key on another request 409', async () => {
    const headers = { 'idempotency-key': 'install-agt-s12-0001' };
    const first = keep(await app.request('POST', `/marketplace/install/${skill.id}/agt_s12`, { token: 'lk_s_write', headers, body: { version: '1.9.0', envValues: { API_KEY: SECRET } } }));
    expect(first.status).toBe(201);
    const before = await counts(skill.id);
    const retry = keep(await app.request('POST', `/marketplace/install/${skill.id}/agt_s12`, { token: 'lk_s_write', headers, body: { version: '1.9.0', envValues: { API_KEY: SECRET } } }));
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await counts(skill.id)).toEqual(before);
    const other = await app.request('POST', `/marketplace/install/${skill.id}/agt_s12`, { token: 'lk_s_write', headers, body: { version: '1.10.0' } });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    // Without the key the same request is a second install: 409.
    expect((await install('POST', skill.id, 'agt_s12', { version: '1.9.0' })).body).toMatchObject({ code: 'SKILL_ALREADY_INSTALLED' });
    expect((await app.request('POST', `/marketplace/install/${skill.id}/agt_s12`, { token: 'lk_s_write', headers: { 'idempotency-key': 'bad key' }, body: {} })).status).toBe(400);
  });

  it('stores env values sealed, opened only with the store\'s key; never in an answer, an audit entry or a log line', async () => {
    const stored = await app.store.sql.query<{ agent_id: string; env_values: string | null }>('select agent_id, env_values from skills_installs where skill_id = $1 and agent_id = $2', [skill.id, 'agt_s1']);
    expect(stored[0]!.env_values).toMatch(/^v1\./);
    expect(stored[0]!.env_values).not.toContain(SECRET_2);
    expect(JSON.parse(app.store.secretBox.open(stored[0]!.env_values!))).toEqual({ API_KEY: SECRET_2 });
    const everything = await app.store.sql.query<{ t: string }>('select row_to_json(a)::text as t from audit_log a');
    const skillAudit = everything.filter((r) => r.t.includes('skills.install'));
    expect(skillAudit.length).toBeGreaterThan(10);
    for (const text of [...answers, ...everything.map((r) => r.t), ...recentAppLogs()]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SECRET_2);
    }
    const created = await app.store.sql.query<any>("select org_id, target_type, target_id, details from audit_log where action = 'skills.install.created' and target_id = 'agt_s1'");
    expect(created).toEqual([{ org_id: 'org_acme', target_type: 'agent', target_id: 'agt_s1', details: { skillId: skill.id, version: '2.0.0-rc.1', envValueNames: ['API_KEY'] } }]);
    const actions = new Set((await app.store.sql.query<{ action: string }>("select action from audit_log where action like 'skills.install.%'")).map((r) => r.action));
    expect(actions).toEqual(new Set(['skills.install.created', 'skills.install.updated', 'skills.install.deleted']));
  });

  it('installs skills visible to the caller only: another organization\'s public skill yes, its private one 404', async () => {
    const pub = await listSkill(app, 'lk_g_all', { sourceSkillId: 'skl_globex', displayName: 'Globex Search' });
    await publish(app, 'lk_g_all', pub.id, '1.0.0');
    const priv = await listSkill(app, 'lk_g_all', { sourceSkillId: 'skl_globex_private', displayName: 'Globex Secret', visibility: 'private' });
    await publish(app, 'lk_g_all', priv.id, '1.0.0');
    expect((await install('POST', pub.id, 'agt_s12', {})).status).toBe(201);
    expect((await install('POST', priv.id, 'agt_s12', {})).status).toBe(404);
    expect((await install('POST', priv.id, 'agt_g1', {}, 'lk_g_all')).status).toBe(201);
  });
});
