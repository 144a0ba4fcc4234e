/**
 * Agent template authoring (spec 03 parts 2.5, 3, 4.4; contract templates): creating from a
 * source agent (a base agent marks the template deployable) or declaratively, publishing numbered
 * versions with the inherit-or-clear rule of the authored sections, the draft preview (nothing
 * persisted), PATCH, visibility with its review, unlist, deprecate and the ownership transfer, with
 * their scopes, error answers and audit entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { badRequest, call, createTemplate, publishVersion, TEMPLATES, TEMPLATES_ENV } from '../../../helpers/templates.js';

describe('agent templates: authoring', () => {
  let app: TestApi;
  let fromBase: any;
  let fromPlain: any;
  let declared: any;
  const audits = (targetId: string) =>
    app.store.sql.query<any>('select action, org_id, actor, details from audit_log where target_type = $1 and target_id = $2 order by at, id', ['template', targetId]);
  const versionCount = async (id: string) => Number((await app.store.sql.query<any>('select count(*)::int as n from template_versions where template_id = $1', [id]))[0].n);

  beforeAll(async () => {
    app = await startApi(TEMPLATES_ENV);
  });
  afterAll(async () => {
    await app?.stop();
  });

  describe('create', () => {
    it('freezes a base agent: sourceBaseAgentId names it; the contract defaults; an audit entry naming the typed key', async () => {
      fromBase = await createTemplate(app, 'lk_t_write', { sourceAgentId: 'agt_base', name: 'support', displayName: 'Support Bot', description: 'Answers customers', visibility: 'public' });
      expect(fromBase).toEqual({
        id: expect.stringMatching(/^tpl_[0-9A-Z]{26}$/), name: 'support', displayName: 'Support Bot', description: 'Answers customers', creatorId: 'usr_ann',
        creatorOrgId: 'org_acme', sourceAgentId: 'agt_base', sourceBaseAgentId: 'agt_base', visibility: 'public', listed: true, latestVersion: 0,
        installCount: 0, activeInstallCount: 0, firstParty: false, createdAt: expect.any(String), updatedAt: expect.any(String),
      });
      expect(await audits(fromBase.id)).toEqual([{
        action: 'templates.template.created', org_id: 'org_acme', actor: { type: 'api_key', id: expect.stringMatching(/^key_[0-9a-f]{16}$/) },
        details: { name: 'support', visibility: 'public', sourceAgentId: 'agt_base', sourceBaseAgentId: 'agt_base' },
      }]);
    });

    it('an ordinary agent or a declarative template has no sourceBaseAgentId; a person is audited as the user', async () => {
      fromPlain = await createTemplate(app, 'sess_ann', { sourceAgentId: 'agt_plain', name: 'plain', displayName: 'Plain' });
      expect(fromPlain).toMatchObject({ sourceAgentId: 'agt_plain', visibility: 'private', creatorOrgId: 'org_acme' });
      expect(fromPlain.sourceBaseAgentId).toBeUndefined();
      expect((await audits(fromPlain.id))[0].actor).toEqual({ type: 'user', id: 'usr_ann' });
      declared = await createTemplate(app, 'lk_t_all', { creatorOrgId: 'org_acme', name: 'declared', displayName: 'Declared', visibility: 'public' });
      expect(declared.sourceAgentId).toBeUndefined();
      expect(declared.sourceBaseAgentId).toBeUndefined();
    });

    it('answers 400 in the framework shape for both or neither source, a missing displayName, an unknown field', async () => {
      for (const body of [
        { sourceAgentId: 'agt_base', creatorOrgId: 'org_acme', name: 'x', displayName: 'X' },
        { name: 'x', displayName: 'X' },
        { sourceAgentId: 'agt_base', name: 'x' },
        { sourceAgentId: 'agt_base', name: 'x', displayName: 'X', colour: 'red' },
        { sourceAgentId: 'agt_base', name: 'x', displayName: 'X', visibility: 'secret' },
      ]) {
        const res = await call(app, 'POST', TEMPLATES, { token: 'lk_t_write', body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body).toEqual(badRequest());
      }
      const none = await call(app, 'POST', TEMPLATES, { token: 'lk_t_write', body: { name: 'x', displayName: 'X' } });
      expect(none.body.message).toEqual(['exactly one of sourceAgentId and creatorOrgId must be given']);
    });

    it('takes automations:write on the source agent or the organization: 403 in spec 01\'s shape otherwise', async () => {
      const noScope = await call(app, 'POST', TEMPLATES, { token: 'lk_t_read', body: { sourceAgentId: 'agt_base', name: 'x', displayName: 'X' } });
      expect(noScope.status).toBe(403);
      expect(noScope.body).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: 'automations:write' });
      const orgNoScope = await call(app, 'POST', TEMPLATES, { token: 'lk_t_manage', body: { creatorOrgId: 'org_acme', name: 'x', displayName: 'X' } });
      expect(orgNoScope.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'automations:write' });
      for (const body of [{ sourceAgentId: 'agt_globex' }, { sourceAgentId: 'agt_hidden' }, { sourceAgentId: 'agt_nope' }, { creatorOrgId: 'org_globex' }]) {
        const res = await call(app, 'POST', TEMPLATES, { token: 'lk_t_write', body: { ...body, name: 'x', displayName: 'X' } });
        expect(res.status, JSON.stringify(body)).toBe(403);
        expect(res.body).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED' });
      }
      // An organization member (not admin) holds automations:write.
      expect((await call(app, 'POST', TEMPLATES, { token: 'sess_max', body: { sourceAgentId: 'agt_plain', name: 'm', displayName: 'M' } })).status).toBe(201);
    });

    it('refuses a template of an archived organization (423 ORG_ARCHIVED)', async () => {
      const res = await call(app, 'POST', TEMPLATES, { token: 'lk_gone_all', body: { sourceAgentId: 'agt_gone', name: 'x', displayName: 'X' } });
      expect(res.status).toBe(423);
      expect(res.body).toMatchObject({ code: 'ORG_ARCHIVED', orgId: 'org_gone' });
    });
  });

  describe('versions', () => {
    it('numbers versions from 1, freezes the source agent at its active version, approves at once', async () => {
      const v1 = await publishVersion(app, 'lk_t_write', fromBase.id, {
        changelog: 'first', envContract: { CRM_TOKEN: { description: 'CRM API token', required: true, example: 'tok_...' } },
        declaredTriggers: [{ key: 'daily', schedule: '0 9 * * *' }], marketplaceSkills: [{ skillId: 'mks_crm', version: '1.0.0' }],
        connections: [{ key: 'crm', type: 'crm', required: true }, { key: 'mail', type: 'email', required: false }],
        personaTemplate: { text: 'You are {{name}}', editable: true }, installPolicy: { perWorkspace: 'single' }, paramsMeta: { tone: { default: 'warm' } },
      });
      expect(v1).toEqual({
        id: expect.stringMatching(/^tplv_/), templateId: fromBase.id, version: 1, createdBy: 'usr_ann', createdAt: expect.any(String),
        content: { agent: { name: 'base-bot' }, declaredTriggers: [{ key: 'daily', schedule: '0 9 * * *' }], marketplaceSkills: [{ skillId: 'mks_crm', version: '1.0.0' }], outcomes: null, channels: null, features: null },
        envContract: { CRM_TOKEN: { description: 'CRM API token', required: true, example: 'tok_...' } }, changelog: 'first', sourceAgentVersion: 3,
        contentHash: expect.stringMatching(/^[0-9a-f]{64}$/), approvalStatus: 'approved', deprecated: false,
        connections: [{ key: 'crm', type: 'crm', required: true }, { key: 'mail', type: 'email', required: false }],
        personaTemplate: { text: 'You are {{name}}', editable: true }, installPolicy: { perWorkspace: 'single' }, paramsMeta: { tone: { default: 'warm' } },
      });
      const t = (await call(app, 'GET', `${TEMPLATES}/${fromBase.id}`, { token: 'lk_t_read' })).body;
      expect(t).toMatchObject({ latestVersion: 1, latestApprovedVersion: 1 });
      const audit = (await audits(fromBase.id)).at(-1);
      expect(audit).toMatchObject({ action: 'templates.version.published', details: { version: 1, approvalStatus: 'approved', contentHash: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    });

    it('inherits an omitted authored section, clears one sent as null, [] or {}, keeps one sent', async () => {
      const v2 = await publishVersion(app, 'lk_t_write', fromBase.id, { connections: [], personaTemplate: null, installPolicy: {}, changelog: 'cleared' });
      expect(v2.version).toBe(2);
      expect(v2.connections).toBeUndefined();
      expect(v2.personaTemplate).toBeUndefined();
      expect(v2.installPolicy).toBeUndefined();
      expect(v2.paramsMeta).toEqual({ tone: { default: 'warm' } });
      // Sections are authored: not inherited are the unsectioned fields (envContract, triggers, skills).
      expect(v2.envContract).toBeUndefined();
      expect(v2.content.declaredTriggers).toEqual([]);
      const v3 = await publishVersion(app, 'lk_t_write', fromBase.id, { paramsMeta: {}, onInstall: { workflow: 'setup' }, triggerPresets: [{ key: 'daily', enabled: true }] });
      expect(v3).toMatchObject({ version: 3, onInstall: { workflow: 'setup' }, triggerPresets: [{ key: 'daily', enabled: true }] });
      expect(v3.paramsMeta).toBeUndefined();
      const v4 = await publishVersion(app, 'lk_t_write', fromBase.id, {});
      expect(v4).toMatchObject({ version: 4, onInstall: { workflow: 'setup' }, triggerPresets: [{ key: 'daily', enabled: true }] });
      // The first version's sections are where they were.
      const v1 = (await call(app, 'GET', `${TEMPLATES}/${fromBase.id}/versions/1`, { token: 'lk_t_read' })).body;
      expect(v1.connections).toHaveLength(2);
    });

    it('checks sourceAgentVersion against the agent\'s active version; a declarative template takes none', async () => {
      const stale = await call(app, 'POST', `${TEMPLATES}/${fromBase.id}/versions`, { token: 'lk_t_write', body: { sourceAgentVersion: 2 } });
      expect(stale.status).toBe(404);
      expect(stale.body).toEqual({ code: 'SOURCE_AGENT_VERSION_NOT_FOUND', message: 'Version 2 of agent agt_base is not its active version (3)', sourceAgentId: 'agt_base', version: 2 });
      const current = await publishVersion(app, 'lk_t_write', fromBase.id, { sourceAgentVersion: 3 });
      expect(current.sourceAgentVersion).toBe(3);
      const declarative = await call(app, 'POST', `${TEMPLATES}/${declared.id}/versions`, { token: 'lk_t_write', body: { sourceAgentVersion: 1 } });
      expect(declarative.status).toBe(404);
      expect(declarative.body.code).toBe('SOURCE_AGENT_VERSION_NOT_FOUND');
      const ok = await publishVersion(app, 'lk_t_write', declared.id, { declaredTriggers: [{ key: 'hourly' }] });
      expect(ok).toMatchObject({ version: 1, content: { agent: {} } });
      expect(ok.sourceAgentVersion).toBeUndefined();
    });

    it('answers 400 for more than 50 skills, repeated trigger or connection keys, malformed sections; nothing is published', async () => {
      const before = await versionCount(fromBase.id);
      const skills = Array.from({ length: 51 }, (_, i) => ({ skillId: `mks_${i}` }));
      for (const body of [
        { marketplaceSkills: skills },
        { declaredTriggers: [{ key: 'a' }, { key: 'a' }] },
        { connections: [{ key: 'c', type: 'x', required: true }, { key: 'c', type: 'y', required: false }] },
        { connections: [{ key: 'c', type: 'x' }] },
        { installPolicy: { perWorkspace: 'many' } },
        { envContract: { '1BAD': { description: 'x', required: true } } },
        { sourceAgentVersion: 0 },
        { skipAutoApply: 'yes' },
      ]) {
        const res = await call(app, 'POST', `${TEMPLATES}/${fromBase.id}/versions`, { token: 'lk_t_write', body });
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(res.body).toEqual(badRequest());
      }
      expect(await versionCount(fromBase.id)).toBe(before);
      const fifty = await publishVersion(app, 'lk_t_write', fromBase.id, { marketplaceSkills: skills.slice(0, 50) });
      expect(fifty.content.marketplaceSkills).toHaveLength(50);
    });

    it('numbers concurrent publishes one after another, each once', async () => {
      const before = (await call(app, 'GET', `${TEMPLATES}/${declared.id}`, { token: 'lk_t_read' })).body.latestVersion;
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => call(app, 'POST', `${TEMPLATES}/${declared.id}/versions`, { token: 'lk_t_write', body: { changelog: `c${i}` } })));
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      expect(results.map((r) => r.body.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5].map((n) => before + n));
    });

    it('takes automations:write on the template\'s source agent; another organization gets 403, a private template 404', async () => {
      const noScope = await call(app, 'POST', `${TEMPLATES}/${fromBase.id}/versions`, { token: 'lk_t_read', body: {} });
      expect(noScope.status).toBe(403);
      expect(noScope.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', resourceType: 'template', resourceId: fromBase.id, requiredScope: 'automations:write' });
      const otherOrg = await call(app, 'POST', `${TEMPLATES}/${fromBase.id}/versions`, { token: 'lk_g_all', body: {} });
      expect(otherOrg.status).toBe(403);
      expect(otherOrg.body).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'template' });
      const privateOne = await call(app, 'POST', `${TEMPLATES}/${fromPlain.id}/versions`, { token: 'lk_g_all', body: {} });
      expect(privateOne.status).toBe(404);
      expect(privateOne.body).toEqual({ code: 'TEMPLATE_NOT_FOUND', message: `Template ${fromPlain.id} not found` });
      const unknown = await call(app, 'POST', `${TEMPLATES}/tpl_NOPE/versions`, { token: 'lk_t_write', body: {} });
      expect(unknown.status).toBe(404);
      expect((await call(app, 'POST', `${TEMPLATES}/not-a-template/versions`, { token: 'lk_t_write', body: {} })).status).toBe(400);
    });
  });

  describe('draft', () => {
    it('previews the next version against the latest and persists nothing', async () => {
      const before = await versionCount(fromPlain.id);
      const first = await call(app, 'POST', `/templates/${fromPlain.id}/versions/draft`, { token: 'lk_t_write', body: {} });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        templateId: fromPlain.id,
        draft: { version: 1, content: { agent: { name: 'plain-bot' }, declaredTriggers: [], marketplaceSkills: [], outcomes: null, channels: null, features: null }, sourceAgentVersion: 2, contentHash: expect.stringMatching(/^[0-9a-f]{64}$/), manifestContentHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
        diff: { fromVersion: null, changed: ['content.agent', 'content.declaredTriggers', 'content.marketplaceSkills'], unchanged: false },
      });
      expect(await versionCount(fromPlain.id)).toBe(before);
      const published = await publishVersion(app, 'lk_t_write', fromPlain.id, { connections: [{ key: 'crm', type: 'crm', required: false }] });
      const again = await call(app, 'POST', `/templates/${fromPlain.id}/versions/draft`, { token: 'lk_t_write', body: { force: true, sourceAgentVersion: 2 } });
      expect(again.body.diff).toEqual({ fromVersion: 1, changed: [], unchanged: true });
      expect(again.body.draft).toMatchObject({ version: 2, connections: [{ key: 'crm', type: 'crm', required: false }], contentHash: published.contentHash });
      expect(await versionCount(fromPlain.id)).toBe(before + 1);
    });

    it('checks as a publish does: scope, visibility, the source agent version', async () => {
      expect((await call(app, 'POST', `/templates/${fromPlain.id}/versions/draft`, { token: 'lk_t_read', body: {} })).body).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
      expect((await call(app, 'POST', `/templates/${fromPlain.id}/versions/draft`, { token: 'lk_g_all', body: {} })).status).toBe(404);
      const stale = await call(app, 'POST', `/templates/${fromPlain.id}/versions/draft`, { token: 'lk_t_write', body: { sourceAgentVersion: 9 } });
      expect(stale.status).toBe(404);
      expect(stale.body.code).toBe('SOURCE_AGENT_VERSION_NOT_FOUND');
      expect((await call(app, 'POST', `/templates/${fromPlain.id}/versions/draft`, { token: 'lk_t_write', body: { force: 'yes' } })).status).toBe(400);
    });
  });

  describe('listing changes', () => {
    it('PATCH changes the display name and description', async () => {
      const res = await call(app, 'PATCH', `${TEMPLATES}/${fromPlain.id}`, { token: 'lk_t_write', body: { displayName: 'Plain Bot', description: 'Plain' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ displayName: 'Plain Bot', description: 'Plain', name: 'plain' });
      expect((await audits(fromPlain.id)).at(-1)).toMatchObject({ action: 'templates.template.updated', details: { fields: ['displayName', 'description'] } });
      expect((await call(app, 'PATCH', `${TEMPLATES}/${fromPlain.id}`, { token: 'lk_t_write', body: { displayName: '' } })).status).toBe(400);
      expect((await call(app, 'PATCH', `${TEMPLATES}/${fromPlain.id}`, { token: 'lk_t_write', body: { name: 'renamed' } })).status).toBe(400);
    });

    it('PUT visibility: private to public goes through the review queue, approved at once; other organizations then see it', async () => {
      expect((await call(app, 'GET', `${TEMPLATES}/${fromPlain.id}`, { token: 'lk_g_all' })).status).toBe(404);
      const res = await call(app, 'PUT', `${TEMPLATES}/${fromPlain.id}/visibility`, { token: 'lk_t_write', body: { visibility: 'public' } });
      expect(res.status).toBe(200);
      expect(res.body.visibility).toBe('public');
      expect((await call(app, 'GET', `${TEMPLATES}/${fromPlain.id}`, { token: 'lk_g_all' })).body.visibility).toBe('public');
      const reviews = await app.store.sql.query<any>("select kind, visibility, status, requested_by from template_reviews where template_id = $1 and kind = 'visibility'", [fromPlain.id]);
      expect(reviews).toEqual([{ kind: 'visibility', visibility: 'public', status: 'approved', requested_by: 'usr_ann' }]);
      expect((await audits(fromPlain.id)).at(-1)).toMatchObject({ action: 'templates.visibility.changed', details: { from: 'private', requested: 'public', to: 'public', review: 'approved' } });
      const back = await call(app, 'PUT', `${TEMPLATES}/${fromPlain.id}/visibility`, { token: 'lk_t_write', body: { visibility: 'private' } });
      expect(back.body.visibility).toBe('private');
      expect((await call(app, 'GET', `${TEMPLATES}/${fromPlain.id}`, { token: 'lk_g_all' })).status).toBe(404);
      expect((await call(app, 'PUT', `${TEMPLATES}/${fromPlain.id}/visibility`, { token: 'lk_t_write', body: {} })).status).toBe(400);
    });

    it('PUT unlist takes a template off other organizations\' lists; publishing lists it again', async () => {
      const listed = async (token: string) => (await call(app, 'GET', `${TEMPLATES}?limit=100`, { token })).body.templates.map((t: any) => t.id);
      expect(await listed('lk_g_all')).toContain(declared.id);
      const res = await call(app, 'PUT', `${TEMPLATES}/${declared.id}/unlist`, { token: 'lk_t_write' });
      expect(res.status).toBe(200);
      expect(res.body.listed).toBe(false);
      expect(await listed('lk_g_all')).not.toContain(declared.id);
      expect(await listed('lk_t_read')).toContain(declared.id);
      // Still public: read by id.
      expect((await call(app, 'GET', `${TEMPLATES}/${declared.id}`, { token: 'lk_g_all' })).status).toBe(200);
      await publishVersion(app, 'lk_t_write', declared.id, {});
      expect(await listed('lk_g_all')).toContain(declared.id);
    });

    it('PUT deprecate marks one version deprecated (the manifest says it is not installable); again keeps the first reason', async () => {
      const res = await call(app, 'PUT', `/templates/${fromBase.id}/versions/1/deprecate`, { token: 'lk_t_write', body: { reason: 'uses the old CRM' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ version: 1, deprecated: true, deprecatedReason: 'uses the old CRM' });
      const again = await call(app, 'PUT', `/templates/${fromBase.id}/versions/1/deprecate`, { token: 'lk_t_write', body: { reason: 'other' } });
      expect(again.body).toMatchObject({ deprecated: true, deprecatedReason: 'uses the old CRM' });
      expect((await audits(fromBase.id)).filter((a) => a.action === 'templates.version.deprecated')).toHaveLength(1);
      const manifest = (await call(app, 'GET', `${TEMPLATES}/${fromBase.id}/versions/1/manifest`, { token: 'lk_t_read' })).body;
      expect(manifest).toMatchObject({ version: 1, deprecated: true, installable: false });
      expect((await call(app, 'GET', `${TEMPLATES}/${fromBase.id}/versions/2`, { token: 'lk_t_read' })).body.deprecated).toBe(false);
      const missing = await call(app, 'PUT', `/templates/${fromBase.id}/versions/99/deprecate`, { token: 'lk_t_write', body: {} });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ code: 'TEMPLATE_VERSION_NOT_FOUND', message: `Version 99 not found for template ${fromBase.id}`, version: 99 });
      expect((await call(app, 'PUT', `/templates/${fromBase.id}/versions/0/deprecate`, { token: 'lk_t_write', body: {} })).status).toBe(400);
    });

    it('PUT owner takes org:manage on the current organization; the new owner then holds the template', async () => {
      const t = await createTemplate(app, 'lk_t_write', { creatorOrgId: 'org_acme', name: 'moving', displayName: 'Moving' });
      const noManage = await call(app, 'PUT', `/templates/${t.id}/owner`, { token: 'lk_t_write', body: { newOrgId: 'org_globex' } });
      expect(noManage.status).toBe(403);
      expect(noManage.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'org:manage' });
      // A member holds every scope but org:manage.
      expect((await call(app, 'PUT', `/templates/${t.id}/owner`, { token: 'sess_max', body: { newOrgId: 'org_globex' } })).body).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
      const unknown = await call(app, 'PUT', `/templates/${t.id}/owner`, { token: 'lk_t_manage', body: { newOrgId: 'org_nope' } });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ code: 'TEMPLATE_ORG_NOT_FOUND', message: 'Organization org_nope not found' });
      expect((await call(app, 'PUT', `/templates/${t.id}/owner`, { token: 'lk_t_manage', body: {} })).status).toBe(400);
      const moved = await call(app, 'PUT', `/templates/${t.id}/owner`, { token: 'lk_t_manage', body: { newOrgId: 'org_globex' } });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ id: t.id, creatorOrgId: 'org_globex' });
      expect((await audits(t.id)).at(-1)).toMatchObject({ action: 'templates.template.transferred', org_id: 'org_acme', details: { fromOrgId: 'org_acme', toOrgId: 'org_globex' } });
      // Private and now Globex's: gone for Acme, Globex's to change.
      expect((await call(app, 'GET', `${TEMPLATES}/${t.id}`, { token: 'lk_t_read' })).status).toBe(404);
      expect((await call(app, 'PATCH', `${TEMPLATES}/${t.id}`, { token: 'lk_g_all', body: { description: 'ours now' } })).status).toBe(200);
    });
  });
});
