/**
 * Template deploys (spec 03 part 4.4; contract templates): a base-agent template deployed mints an
 * agent in the target organization (a personal one for a caller with none) and installs the
 * template on it; the Idempotency-Key (required, 16-128 letters, digits, _ or -) belongs to the
 * caller and the route, and a retry, sequential or concurrent, answers the one deploy and never
 * mints a second agent; the poll route; the refusals (not deployable, deprecated, seal, env).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_MODE } from '../../../helpers/app.js';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { badRequest, call, createTemplate, publishVersion, TEMPLATES } from '../../../helpers/templates.js';

export const DEPLOY_SEED = new URL('../../../fixtures/seed-templates-deploy.json', import.meta.url).pathname;
const SECRET = 'tok-live-5e0c1b9a77d2-never-shown';

const newKey = (): string => `dk-${randomBytes(12).toString('hex')}`;

describe(`template deploys (${TEST_MODE})`, () => {
  let app: TestApi;
  let tpl: any;
  let plain: any;
  let seal: string;
  const deploy = (id: string, body: unknown, key: string | undefined, token = 'sess_ann') =>
    call(app, 'POST', `${TEMPLATES}/${id}/deploy`, { token, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
  const poll = (deployId: string, token = 'sess_ann') => call(app, 'GET', `${TEMPLATES}/deploys/${deployId}`, { token });
  const agentsOf = async (orgId: string) =>
    (await app.store.sql.query<{ id: string; name: string; visibility: string }>('select id, name, visibility from agents where org_id = $1 order by id', [orgId]));

  beforeAll(async () => {
    app = await startApi({ SEED_FILE: DEPLOY_SEED, TRUST_PROXY: 'true' });
    tpl = await createTemplate(app, 'sess_ann', { sourceAgentId: 'agt_base', name: 'receptionist', displayName: 'Receptionist', visibility: 'public' });
    await publishVersion(app, 'sess_ann', tpl.id, { envContract: { API_TOKEN: { description: 'the CRM token', required: true } } });
    plain = await createTemplate(app, 'sess_ann', { sourceAgentId: 'agt_plain', name: 'plain', displayName: 'Plain', visibility: 'public' });
    await publishVersion(app, 'sess_ann', plain.id, {});
    const manifest = await call(app, 'GET', `${TEMPLATES}/${tpl.id}/manifest`, { token: 'sess_ann' });
    expect(manifest.status).toBe(200);
    seal = manifest.body.contentHash;
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('marks the template as a base-agent one', () => {
    expect(tpl.sourceBaseAgentId).toBe('agt_base');
    expect(plain.sourceBaseAgentId ?? null).toBeNull();
  });

  it('requires an Idempotency-Key of 16-128 letters, digits, _ or -', async () => {
    const before = (await agentsOf('org_acme')).length;
    for (const key of [undefined, 'short', 'x'.repeat(129), 'has spaces in it 123', 'ünïcödé-key-1234567']) {
      const res = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, key);
      expect(res.status, `${key}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body).toEqual(badRequest());
    }
    expect(await agentsOf('org_acme')).toHaveLength(before);
  });

  it('deploys: a new org agent named after the template, installed, answered 201 and read back by the poll', async () => {
    const before = await agentsOf('org_acme');
    const res = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET }, contentHash: seal }, newKey());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ deployId: expect.stringMatching(/^dpl_/), agentId: expect.stringMatching(/^agt_/), orgId: 'org_acme', status: 'installed', lastError: null });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    const after = await agentsOf('org_acme');
    expect(after).toHaveLength(before.length + 1);
    expect(after.find((a) => a.id === res.body.agentId)).toMatchObject({ name: 'Receptionist', visibility: 'org' });
    const polled = await poll(res.body.deployId);
    expect(polled.status).toBe(200);
    expect(polled.body).toMatchObject({ deployId: res.body.deployId, status: 'succeeded', result: { agentId: res.body.agentId, orgId: 'org_acme' } });
    expect(JSON.stringify(polled.body)).not.toContain(SECRET);
    // Another organization's deploy is not found; the same organization's read-only key reads it.
    expect((await poll(res.body.deployId, 'sess_gus')).status).toBe(404);
    expect((await poll(res.body.deployId, 'lk_acme_read')).status).toBe(200);
    expect((await poll('dpl_unknown', 'sess_ann')).status).toBe(404);
  });

  it('installs the template on the minted agent, which the template may remove with removeAgent=true', async () => {
    const res = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, newKey());
    expect(res.status).toBe(201);
    const installed = await call(app, 'GET', `/agents/${res.body.agentId}/templates`, { token: 'sess_ann' });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    expect(installed.body).toEqual([expect.objectContaining({ templateId: tpl.id, installedVersion: 1 })]);
    const removed = await call(app, 'DELETE', `${TEMPLATES}/${tpl.id}/installs/${res.body.agentId}?removeAgent=true`, { token: 'sess_ann' });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toMatchObject({ success: true, agentRemoved: true });
    expect((await agentsOf('org_acme')).map((a) => a.id)).not.toContain(res.body.agentId);
  });

  it('names the agent agentDisplayName and deploys into the orgId given', async () => {
    const res = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET }, agentDisplayName: 'Front desk', orgId: 'org_globex' }, newKey(), 'sess_gus');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.orgId).toBe('org_globex');
    expect((await agentsOf('org_globex')).find((a) => a.id === res.body.agentId)?.name).toBe('Front desk');
    // An organization the caller is not of: refused, nothing minted.
    const n = (await agentsOf('org_globex')).length;
    const denied = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET }, orgId: 'org_globex' }, newKey(), 'sess_ann');
    expect(denied.status).toBe(403);
    expect(await agentsOf('org_globex')).toHaveLength(n);
  });

  it('answers a retry with the original outcome and mints once; another body under the key is refused', async () => {
    const key = newKey();
    const body = { envValues: { API_TOKEN: SECRET } };
    const first = await deploy(tpl.id, body, key);
    expect(first.status).toBe(201);
    const n = (await agentsOf('org_acme')).length;
    const again = await deploy(tpl.id, body, key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await agentsOf('org_acme')).toHaveLength(n);
    const other = await deploy(tpl.id, { envValues: { API_TOKEN: 'another' } }, key);
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', deployId: first.body.deployId });
    expect(await agentsOf('org_acme')).toHaveLength(n);
  });

  it('answers concurrent deploys with one key with the one deploy, one agent minted', async () => {
    const key = newKey();
    const n = (await agentsOf('org_acme')).length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, key)));
    const statuses = new Set(answers.map((a) => a.status));
    expect([...statuses], JSON.stringify(answers.map((a) => a.body))).toEqual([201]);
    expect(new Set(answers.map((a) => a.body.deployId)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.agentId)).size).toBe(1);
    expect(await agentsOf('org_acme')).toHaveLength(n + 1);
  });

  it('keeps keys apart per user: the same key from another user is another deploy', async () => {
    const key = newKey();
    const a = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, key, 'sess_ann');
    const g = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, key, 'sess_gus');
    expect(a.status).toBe(201);
    expect(g.status).toBe(201);
    expect(g.body.deployId).not.toBe(a.body.deployId);
    expect(g.body.orgId).toBe('org_globex');
  });

  it('gives a caller without an organization a personal one, once per key', async () => {
    const key = newKey();
    const [one, two] = await Promise.all([deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, key, 'sess_sol'), deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, key, 'sess_sol')]);
    expect(one.status, JSON.stringify(one.body)).toBe(201);
    expect(two.body.deployId).toBe(one.body.deployId);
    const orgs = await app.store.sql.query<{ org_id: string; role: string }>(`select org_id, role from memberships where user_id = 'usr_sol'`);
    expect(orgs).toEqual([{ org_id: one.body.orgId, role: 'admin' }]);
    expect((await agentsOf(one.body.orgId)).map((a) => a.id)).toEqual([one.body.agentId]);
    expect((await poll(one.body.deployId, 'sess_sol')).body.status).toBe('succeeded');
  });

  it('refuses before minting: not deployable, deprecated version, seal mismatch, missing env value, no scope, archived organization', async () => {
    const n = (await agentsOf('org_acme')).length;
    const notDeployable = await deploy(plain.id, {}, newKey());
    expect(notDeployable.status).toBe(409);
    expect(notDeployable.body).toMatchObject({ code: 'TEMPLATE_NOT_DEPLOYABLE', message: expect.any(String) });
    const env = await deploy(tpl.id, {}, newKey());
    expect(env.status).toBe(400);
    expect(env.body).toMatchObject({ code: 'ENV_VALUE_REQUIRED', key: 'API_TOKEN' });
    const hash = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET }, contentHash: '0'.repeat(64) }, newKey());
    expect(hash.status).toBe(409);
    expect(hash.body.code).toBe('CONTENT_HASH_MISMATCH');
    const scope = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET } }, newKey(), 'lk_acme_read');
    expect(scope.status).toBe(403);
    expect(scope.body.code).toBe('INSUFFICIENT_SCOPE');
    const archived = await deploy(tpl.id, { envValues: { API_TOKEN: SECRET }, orgId: 'org_old' }, newKey());
    expect(archived.status).toBe(423);
    expect((await deploy('tpl_nope', {}, newKey())).status).toBe(404);
    expect(await agentsOf('org_acme')).toHaveLength(n);

    // A deprecated version: a new deploy is refused, a retry of a deploy made before it answers as before.
    const made = await createTemplate(app, 'sess_ann', { sourceAgentId: 'agt_base', name: 'old-one', displayName: 'Old one', visibility: 'private' });
    await publishVersion(app, 'sess_ann', made.id, {});
    const key = newKey();
    const before = await deploy(made.id, {}, key);
    expect(before.status).toBe(201);
    const dep = await call(app, 'PUT', `/templates/${made.id}/versions/1/deprecate`, { token: 'sess_ann', body: { reason: 'superseded' } });
    expect(dep.status, JSON.stringify(dep.body)).toBe(200);
    const refused = await deploy(made.id, {}, newKey());
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('TEMPLATE_VERSION_DEPRECATED');
    expect((await deploy(made.id, {}, key)).body).toEqual(before.body);
  });

  it('rolls a deploy the install refuses back: no agent left, the refusal answered to every request with the key', async () => {
    const single = await createTemplate(app, 'sess_ann', { sourceAgentId: 'agt_base', name: 'single', displayName: 'Single', visibility: 'private' });
    await publishVersion(app, 'sess_ann', single.id, { installPolicy: { perWorkspace: 'single' } });
    expect((await deploy(single.id, {}, newKey())).status).toBe(201);
    const n = (await agentsOf('org_acme')).length;
    const key = newKey();
    const refused = await deploy(single.id, {}, key);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body).toMatchObject({ code: 'INSTALL_POLICY_SINGLE', deployId: expect.stringMatching(/^dpl_/) });
    expect(await agentsOf('org_acme')).toHaveLength(n);
    const polled = await poll(refused.body.deployId);
    expect(polled.body).toMatchObject({ deployId: refused.body.deployId, status: 'rolled_back', stage: 'done', error: { code: 'INSTALL_POLICY_SINGLE' } });
    expect(polled.body.result).toBeUndefined();
    expect((await deploy(single.id, {}, key)).body).toEqual(refused.body);
    const removed = await app.store.sql.query(`select 1 from audit_log where action = 'templates.agent.removed' and details->>'deployId' = $1`, [refused.body.deployId]);
    expect(removed).toHaveLength(1);
  });

  it('keeps env values out of the audit log and the stored request', async () => {
    const audit = await app.store.sql.query<{ details: unknown }>(`select details from audit_log where action like 'templates.deploy%'`);
    expect(JSON.stringify(audit)).not.toContain(SECRET);
    const stored = await app.store.sql.query<{ request: unknown }>('select request from template_deploys');
    expect(stored.length).toBeGreaterThan(0);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
  });
});

describe(`deploy sessions, eligible targets and install requests (${TEST_MODE})`, () => {
  let app: TestApi;
  let tpl: any;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: DEPLOY_SEED, TRUST_PROXY: 'true' });
    tpl = await createTemplate(app, 'sess_ann', { sourceAgentId: 'agt_base', name: 'sessions', displayName: 'Sessions', description: 'Answers the phone', visibility: 'public' });
    await publishVersion(app, 'sess_ann', tpl.id, {});
    await publishVersion(app, 'sess_ann', tpl.id, {});
  });
  afterAll(async () => {
    await app?.stop();
  });
  const session = (method: string, token: string, body?: unknown, version?: number) =>
    call(app, method, `${TEMPLATES}/${tpl.id}/deploy-session${version === undefined ? '' : `?version=${version}`}`, { token, ...(body !== undefined ? { body } : {}) });

  it('starts empty, deep-merges answers and connectState, and keeps each caller and version apart', async () => {
    const empty = await session('GET', 'sess_ann');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      session: { templateId: tpl.id, version: 2, answers: {}, connectState: {}, idempotencyKey: null, updatedAt: null },
      copy: { title: 'Deploy Sessions', description: 'Answers the phone', version: 2 },
    });
    const key = newKey();
    const one = await session('PUT', 'sess_ann', { answers: { persona: { tone: 'warm', name: 'Ava' }, hours: [9, 17] }, idempotencyKey: key });
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    const two = await session('PUT', 'sess_ann', { answers: { persona: { tone: 'crisp' }, hours: [8] }, connectState: { crm: { step: 2 } } });
    expect(two.body.session).toMatchObject({ answers: { persona: { tone: 'crisp', name: 'Ava' }, hours: [8] }, connectState: { crm: { step: 2 } }, idempotencyKey: key });
    expect((await session('GET', 'sess_ann')).body.session).toEqual(two.body.session);
    // Another caller, another version: their own sessions.
    expect((await session('GET', 'sess_gus')).body.session.answers).toEqual({});
    expect((await session('GET', 'sess_ann', undefined, 1)).body.session).toMatchObject({ version: 1, answers: {} });
    expect((await session('GET', 'lk_acme_read')).body.session.answers).toEqual(two.body.session.answers);
  });

  it('refuses a bad session body or version, an unknown version, and a key without marketplace:read', async () => {
    expect((await session('PUT', 'sess_ann', { answers: 'text' })).status).toBe(400);
    expect((await session('PUT', 'sess_ann', { idempotencyKey: 'short' })).status).toBe(400);
    expect((await session('GET', 'sess_ann', undefined, 0)).status).toBe(400);
    expect((await session('GET', 'sess_ann', undefined, 9)).status).toBe(404);
    const denied = await session('GET', 'lk_acme_logs');
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('INSUFFICIENT_SCOPE');
    expect((await call(app, 'GET', `${TEMPLATES}/tpl_nope/deploy-session`, { token: 'sess_ann' })).status).toBe(404);
  });

  it('lists the eligible targets: installed, shared for a member, hidden agents only to persons', async () => {
    const key = newKey();
    const deployed = await call(app, 'POST', `${TEMPLATES}/${tpl.id}/deploy`, { token: 'sess_ann', body: {}, headers: { 'idempotency-key': key } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const admin = await call(app, 'GET', `/templates/${tpl.id}/eligible-targets`, { token: 'sess_ann' });
    expect(admin.status).toBe(200);
    const byId = new Map((admin.body as any[]).map((t) => [t.agentId, t]));
    expect(byId.get(deployed.body.agentId)).toEqual({ agentId: deployed.body.agentId, name: 'Sessions', orgId: 'org_acme', installable: false, reason: 'already-installed' });
    expect(byId.get('agt_plain')).toEqual({ agentId: 'agt_plain', name: 'support-bot', orgId: 'org_acme', installable: true });
    expect(byId.get('agt_hidden')).toMatchObject({ installable: true });
    expect(new Set((admin.body as any[]).map((t) => t.agentId)).size).toBe((admin.body as any[]).length);
    const member = await call(app, 'GET', `/templates/${tpl.id}/eligible-targets`, { token: 'sess_mia' });
    expect(member.status).toBe(200);
    const m = new Map((member.body as any[]).map((t) => [t.agentId, t]));
    expect(m.get('agt_plain')).toEqual({ agentId: 'agt_plain', name: 'support-bot', orgId: 'org_acme', installable: false, reason: 'shared-agent-requires-org-admin' });
    expect(m.get(deployed.body.agentId)?.reason).toBe('already-installed');
    // A scoped key sees the organization's agents but not a private one without a grant.
    const keyed = await call(app, 'GET', `/templates/${tpl.id}/eligible-targets`, { token: 'lk_acme_read' });
    expect((keyed.body as any[]).map((t) => t.agentId)).not.toContain('agt_hidden');
    expect((keyed.body as any[]).find((t) => t.agentId === 'agt_plain')).toMatchObject({ installable: true });
    expect((await call(app, 'GET', `/templates/${tpl.id}/eligible-targets`, { token: 'lk_acme_logs' })).status).toBe(403);
    expect((await call(app, 'GET', '/templates/tpl_nope/eligible-targets', { token: 'sess_ann' })).status).toBe(404);
  });

  it('answers install-requests/mine with an array, orgId required', async () => {
    const mine = await call(app, 'GET', `${TEMPLATES}/install-requests/mine?orgId=org_acme`, { token: 'sess_mia' });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([]);
    expect((await call(app, 'GET', `${TEMPLATES}/install-requests/mine`, { token: 'sess_mia' })).status).toBe(400);
    expect((await call(app, 'GET', `${TEMPLATES}/install-requests/mine?orgId=org_globex`, { token: 'sess_mia' })).status).toBe(403);
  });
});
