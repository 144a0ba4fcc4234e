/**
 * Template installs (spec 03 parts 2.5, 4.4; contract templates): install onto an agent with the
 * seal, env contract, install policy and deprecation checks (a refused install leaves no record),
 * what the install does in the other families (a persona applied, a marketplace skill installed,
 * the onInstall workflow started), re-install, the per-agent lists, update preview, consent, setup
 * retry, removal preview and removal, with their scopes and error answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { call, createTemplate, publishVersion, TEMPLATES } from '../../../helpers/templates.js';

const SEED = new URL('../../../fixtures/seed-template-installs.json', import.meta.url).pathname;

describe('agent templates: installs', () => {
  let app: TestApi;
  let tpl: any;
  let seal: string;
  let skillId: string;

  const install = (templateId: string, agentId: string, body: Record<string, unknown>, token = 'lk_t_all') =>
    call(app, 'POST', `${TEMPLATES}/${templateId}/install/${agentId}`, { token, body });
  const listed = async (agentId: string) => (await call(app, 'GET', `/agents/${agentId}/templates`, { token: 'sess_ann' })).body;
  const manifestSeal = async (id: string, version?: number) =>
    (await call(app, 'GET', `${TEMPLATES}/${id}${version === undefined ? '' : `/versions/${version}`}/manifest`, { token: 'sess_ann' })).body.contentHash as string;

  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SEED, TRUST_PROXY: 'true' });
    // A marketplace skill of the organization, published with a required env variable.
    const listedSkill = await call(app, 'POST', '/marketplace/skills/list', { token: 'lk_t_all', body: { sourceSkillId: 'skl_acme_crm', displayName: 'CRM', visibility: 'public' } });
    expect(listedSkill.status, JSON.stringify(listedSkill.body)).toBe(201);
    skillId = listedSkill.body.id;
    const pub = await call(app, 'POST', `/marketplace/skills/${skillId}/versions/publish`, { token: 'lk_t_all', body: { version: '1.0.0', envVarsMetadata: { CRM_TOKEN: { description: 'token', required: true } } } });
    expect(pub.status, JSON.stringify(pub.body)).toBe(201);

    tpl = await createTemplate(app, 'lk_t_all', { creatorOrgId: 'org_acme', name: 'helper', displayName: 'Helper', visibility: 'private' });
    await publishVersion(app, 'lk_t_all', tpl.id, {
      changelog: 'first',
      envContract: { CRM_TOKEN: { description: 'the CRM token', required: true }, REGION: { description: 'region', required: false } },
      declaredTriggers: [{ key: 'nightly' }, { key: 'on-ticket' }],
      marketplaceSkills: [{ skillId }],
      personaTemplate: { persona: 'You help {{company}}.', editable: true },
      onInstall: { workflow: 'setup' },
      onUninstall: { workflow: 'goodbye' },
    });
    seal = await manifestSeal(tpl.id);
  });
  afterAll(async () => app?.stop());

  describe('install', () => {
    it('refuses a seal that is not the version\'s with 409 CONTENT_HASH_MISMATCH, and leaves no record anywhere', async () => {
      const res = await install(tpl.id, 'agt_plain', { contentHash: '0'.repeat(64), envValues: { CRM_TOKEN: 'tok-1' } });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'CONTENT_HASH_MISMATCH' });
      expect(await listed('agt_plain')).toEqual([]);
      expect((await call(app, 'GET', `/marketplace/installations/agt_plain`, { token: 'sess_ann' })).body).toEqual([]);
    });

    it('refuses a missing required env value with 400 ENV_VALUE_REQUIRED naming the key, skipEnvCheck stripped; no record', async () => {
      const res = await install(tpl.id, 'agt_plain', { contentHash: seal, envValues: { REGION: 'eu' }, skipEnvCheck: true });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'ENV_VALUE_REQUIRED', key: 'CRM_TOKEN' });
      expect(await listed('agt_plain')).toEqual([]);
    });

    it('installs: the persona applied, the skill installed, the onInstall run started, env values never answered', async () => {
      const res = await install(tpl.id, 'agt_plain', {
        contentHash: seal, envValues: { CRM_TOKEN: 'tok-secret-1' }, personaVars: { company: 'Acme' }, triggerOverrides: { nightly: { enabled: true } },
        colour: 'red',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({
        templateId: tpl.id, agentId: 'agt_plain', orgId: 'org_acme', installedVersion: 1, appliedAgentVersion: '2', allowCreatorUpdates: false,
        status: 'installed', lastError: null, appliedBy: 'usr_ann', appliedAt: expect.any(String), installedBy: 'usr_ann', contentHash: seal,
        armedTriggers: ['nightly'], blockedTriggers: [], unwatchedTriggers: [], triggerEndpoints: [], hiddenParamsCleared: [], personaSkipped: false,
        onInstallFired: true, onInstall: { toolRan: true, ok: true }, onInstallWorkflowRunId: expect.stringMatching(/^wfr_/),
      });
      expect(JSON.stringify(res.body)).not.toContain('tok-secret-1');
      // The persona family: a new current version from the template.
      const persona = await call(app, 'GET', '/developer/agents/agt_plain/persona/versions', { token: 'sess_ann' });
      expect(persona.body.versions.map((v: any) => v.persona)).toContain('You help Acme.');
      // The skills family: the template's skill on the agent.
      const skills = await call(app, 'GET', '/marketplace/installations/agt_plain', { token: 'sess_ann' });
      expect(skills.body.map((s: any) => s.marketplaceSkillId)).toEqual([skillId]);
      // The workflows family: the onInstall run, triggered by the template.
      const run = await call(app, 'GET', `/workflows/agt_plain/runs/${res.body.onInstallWorkflowRunId}`, { token: 'sess_ann' });
      expect(run.status).toBe(200);
      expect(run.body.trigger).toBe('template');
      // Stored sealed.
      const [row] = await app.store.sql.query<{ env_values: string }>('select env_values from template_installs where template_id = $1', [tpl.id]);
      expect(row!.env_values).not.toContain('tok-secret-1');
      const audit = await app.store.sql.query<any>(`select action, details from audit_log where action like 'templates.install.%' and target_id = 'agt_plain'`);
      expect(audit).toEqual([expect.objectContaining({ action: 'templates.install.created' })]);
      expect(JSON.stringify(audit)).not.toContain('tok-secret-1');
    });

    it('a re-install that changes nothing answers already_current; a changed trigger applies again', async () => {
      const same = await install(tpl.id, 'agt_plain', { contentHash: seal });
      expect(same.status, JSON.stringify(same.body)).toBe(201);
      expect(same.body).toMatchObject({ status: 'already_current', armedTriggers: ['nightly'], onInstallFired: false });
      const moved = await install(tpl.id, 'agt_plain', { triggerOverrides: { 'on-ticket': { enabled: true } } });
      expect(moved.body).toMatchObject({ status: 'installed', armedTriggers: ['nightly', 'on-ticket'], installedBy: 'usr_ann' });
      const unknown = await install(tpl.id, 'agt_plain', { triggerOverrides: { nope: { enabled: true } } });
      expect(unknown.status).toBe(400);
    });

    it('lists the install on both per-agent routes', async () => {
      const short = await call(app, 'GET', `${TEMPLATES}/agent/agt_plain`, { token: 'lk_t_read' });
      expect(short.status).toBe(200);
      expect(short.body).toEqual([{ templateId: tpl.id, displayName: 'Helper', installedVersion: 1, appliedAt: expect.any(String), installedBy: 'usr_ann', status: 'installed' }]);
      const long = await listed('agt_plain');
      expect(long[0]).toMatchObject({
        templateId: tpl.id, updateAvailable: false, allowCreatorUpdates: false, lastError: null, latestApprovedVersion: 1,
        triggers: [{ key: 'nightly', enabled: true }, { key: 'on-ticket', enabled: true }], setup: { status: 'ok', workflowRunId: expect.any(String) },
      });
    });

    it('enforces installPolicy single across the organization\'s agents, and refuses a deprecated version', async () => {
      const single = await createTemplate(app, 'lk_t_all', { creatorOrgId: 'org_acme', name: 'single', displayName: 'Single' });
      await publishVersion(app, 'lk_t_all', single.id, { installPolicy: { perWorkspace: 'single' } });
      expect((await install(single.id, 'agt_plain', {})).status).toBe(201);
      const second = await install(single.id, 'agt_second', {});
      expect(second.status).toBe(409);
      expect(second.body).toMatchObject({ code: 'INSTALL_POLICY_SINGLE' });
      expect((await listed('agt_second')).map((i: any) => i.templateId)).not.toContain(single.id);
      // A re-install on the agent that has it is not a second install.
      expect((await install(single.id, 'agt_plain', {})).body.status).toBe('already_current');
      // No body at all: the latest version, nothing else asked.
      const noBody = await call(app, 'POST', `${TEMPLATES}/${single.id}/install/agt_plain`, { token: 'lk_t_all' });
      expect(noBody.status, JSON.stringify(noBody.body)).toBe(201);
      expect(noBody.body.status).toBe('already_current');

      const old = await createTemplate(app, 'lk_t_all', { creatorOrgId: 'org_acme', name: 'old', displayName: 'Old' });
      await publishVersion(app, 'lk_t_all', old.id, {});
      expect((await call(app, 'PUT', `/templates/${old.id}/versions/1/deprecate`, { token: 'lk_t_all', body: { reason: 'superseded' } })).status).toBe(200);
      const dep = await install(old.id, 'agt_second', {});
      expect(dep.status).toBe(409);
      expect(dep.body).toMatchObject({ code: 'TEMPLATE_VERSION_DEPRECATED' });
      expect(await listed('agt_second')).toEqual([]);
    });

    it('answers the scopes and visibility of the template and the agent', async () => {
      const noScope = await install(tpl.id, 'agt_second', {}, 'lk_t_read');
      expect(noScope.status).toBe(403);
      expect(noScope.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'automations:write' });
      const otherOrg = await install(tpl.id, 'agt_second', {}, 'lk_g_all');
      expect(otherOrg.status).toBe(403);
      expect(otherOrg.body).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED' });
      // The template is private to Acme: Globex's agent cannot have it.
      const hidden = await install(tpl.id, 'agt_globex', {}, 'lk_g_all');
      expect(hidden.status).toBe(404);
      expect(hidden.body).toMatchObject({ code: 'TEMPLATE_NOT_FOUND' });
      const malformed = await install(tpl.id, 'agt_second', { contentHash: 'abc' });
      expect(malformed.status).toBe(400);
    });
  });

  describe('after install', () => {
    it('previews an update to a newer version', async () => {
      await publishVersion(app, 'lk_t_all', tpl.id, { changelog: 'second', declaredTriggers: [{ key: 'nightly' }], envContract: { CRM_TOKEN: { description: 't', required: true }, API: { description: 'a', required: true } } });
      const res = await call(app, 'GET', `/agents/agt_plain/templates/${tpl.id}/update-preview`, { token: 'lk_t_read' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        fromVersion: 1, toVersion: 2, changelog: 'second', envContract: { added: ['API'], removed: ['REGION'], newlyRequired: ['API'] },
        consentSurfaceChanged: true, codeChanged: true, armedTriggersSurviving: ['nightly'], driftedPrimitives: [],
      });
      expect((await listed('agt_plain'))[0]).toMatchObject({ updateAvailable: true, updatePendingConsent: true });
    });

    it('PATCH sets the consent; a missing allowCreatorUpdates is 400', async () => {
      const res = await call(app, 'PATCH', `/agents/agt_plain/templates/${tpl.id}`, { token: 'lk_t_all', body: { allowCreatorUpdates: true } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ templateId: tpl.id, allowCreatorUpdates: true, updatePendingConsent: false });
      expect((await call(app, 'PATCH', `/agents/agt_plain/templates/${tpl.id}`, { token: 'lk_t_all', body: {} })).status).toBe(400);
      expect((await call(app, 'PATCH', `/agents/agt_second/templates/${tpl.id}`, { token: 'lk_t_all', body: { allowCreatorUpdates: true } })).status).toBe(404);
    });

    it('setup retry answers already-started for a hook that started, and starts a hook that failed', async () => {
      const again = await call(app, 'POST', `/agents/agt_plain/templates/${tpl.id}/setup/retry`, { token: 'lk_t_all' });
      expect(again.status).toBe(201);
      expect(again.body).toEqual({ startWorkflow: { outcome: 'already-started', runId: expect.stringMatching(/^wfr_/) } });
      // agt_second has no `setup` workflow: the hook fails, the install stands.
      const res = await install(tpl.id, 'agt_second', { version: 1, envValues: { CRM_TOKEN: 'tok-2' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ onInstallFired: true, onInstall: { toolRan: false, ok: false }, onInstallError: { code: 'workflow-not-materialized' } });
      const retry = await call(app, 'POST', `/agents/agt_second/templates/${tpl.id}/setup/retry`, { token: 'lk_t_all' });
      expect(retry.body).toMatchObject({ startWorkflow: { outcome: 'failed', error: { code: 'workflow-not-materialized' } } });
    });

    it('previews a removal and removes the install; a second DELETE is 404; removeAgent on an agent not minted is 409', async () => {
      const preview = await call(app, 'GET', `${TEMPLATES}/${tpl.id}/installs/agt_plain/removal-preview`, { token: 'lk_t_read' });
      expect(preview.status).toBe(200);
      expect(preview.body).toMatchObject({ agentId: 'agt_plain', agentName: 'plain-bot', minted: false, soleInstall: false, memberTotal: 0 });
      const notMinted = await call(app, 'DELETE', `${TEMPLATES}/${tpl.id}/installs/agt_plain?removeAgent=true`, { token: 'lk_t_all' });
      expect(notMinted.status).toBe(409);
      expect(notMinted.body).toMatchObject({ code: 'agent-not-template-minted' });
      const removed = await call(app, 'DELETE', `${TEMPLATES}/${tpl.id}/installs/agt_plain`, { token: 'lk_t_all' });
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ success: true, onUninstall: { ran: true, ok: true } });
      expect((await listed('agt_plain')).map((i: any) => i.templateId)).not.toContain(tpl.id);
      expect((await call(app, 'DELETE', `${TEMPLATES}/${tpl.id}/installs/agt_plain`, { token: 'lk_t_all' })).status).toBe(404);
    });

    it('removes a minted agent with its install, and the agent is refused at once', async () => {
      const minted = await app.store.tenancy.createAgent({ orgId: 'org_acme', name: 'minted-bot', visibility: 'org' });
      const res = await install(tpl.id, minted.id, { version: 1, envValues: { CRM_TOKEN: 'tok-3' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await app.store.sql.query('update template_installs set minted = true where agent_id = $1', [minted.id]);
      expect((await call(app, 'GET', `${TEMPLATES}/${tpl.id}/installs/${minted.id}/removal-preview`, { token: 'sess_ann' })).body.minted).toBe(true);
      const removed = await call(app, 'DELETE', `${TEMPLATES}/${tpl.id}/installs/${minted.id}?removeAgent=true`, { token: 'lk_t_all' });
      expect(removed.status, JSON.stringify(removed.body)).toBe(200);
      expect(removed.body).toEqual({ success: true, onUninstall: { ran: false }, agentRemoved: true });
      expect((await call(app, 'GET', `/agents/${minted.id}/templates`, { token: 'sess_ann' })).status).toBe(403);
    });
  });
});
