/**
 * Creator updates (spec 03 part 4.4 POST versions, PATCH consent, update-preview; contract
 * templates): a published version fans out to the installs that consented, in the publishing unit
 * of work; the others keep their version and read `updateAvailable`. One apply that is refused
 * leaves that install at its version with `lastError` and does not stop the others. A persona the
 * agent changed since the template applied it refuses an apply over it (`MODIFIED_SINCE_INSTALL`)
 * unless accepted, and an auto-apply skips that install.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { call, createTemplate, publishVersion, TEMPLATES } from '../../../helpers/templates.js';

const SEED = new URL('../../../fixtures/seed-template-installs.json', import.meta.url).pathname;

describe('agent templates: creator updates and modified primitives', () => {
  let app: TestApi;
  let tpl: any;

  const install = (agentId: string, body: Record<string, unknown>) => call(app, 'POST', `${TEMPLATES}/${tpl.id}/install/${agentId}`, { token: 'lk_t_all', body });
  // Every version declares the one trigger (declared triggers are not inherited from version to version).
  const publish = (body: Record<string, unknown>) => publishVersion(app, 'lk_t_all', tpl.id, { declaredTriggers: [{ key: 'nightly' }], ...body });
  const listedOne = async (agentId: string) =>
    ((await call(app, 'GET', `/agents/${agentId}/templates`, { token: 'sess_ann' })).body as any[]).find((i) => i.templateId === tpl.id);
  const currentPersona = async (agentId: string) => {
    const rows = await app.store.sql.query<{ persona: unknown }>(
      `select v.persona from persona_agents a join persona_versions v on v.agent_id = a.agent_id and v.version = a.current_version where a.agent_id = $1`,
      [agentId],
    );
    return rows[0]?.persona;
  };

  beforeAll(async () => {
    app = await startApi({ SEED_FILE: SEED, TRUST_PROXY: 'true' });
    tpl = await createTemplate(app, 'lk_t_all', { creatorOrgId: 'org_acme', name: 'updater', displayName: 'Updater', visibility: 'private' });
    await publish({ personaTemplate: 'You are v1.' });
    // agt_plain consents through PATCH, agt_second in its install body; agt_base does not consent.
    expect((await install('agt_plain', { triggerOverrides: { nightly: { enabled: true } } })).status).toBe(201);
    const consent = await call(app, 'PATCH', `/agents/agt_plain/templates/${tpl.id}`, { token: 'lk_t_all', body: { allowCreatorUpdates: true } });
    expect(consent.status).toBe(200);
    expect((await install('agt_second', { allowCreatorUpdates: true, envValues: { API_KEY: 'k-second-secret' } })).status).toBe(201);
    expect((await install('agt_base', {})).status).toBe(201);
  });
  afterAll(async () => app?.stop());

  it('a publish applies the version to the consenting installs only, and answers autoApplyRunId and autoApplyTargetCount', async () => {
    const v2 = await publish({ personaTemplate: 'You are v2.', changelog: 'second' });
    expect(v2).toMatchObject({ version: 2, autoApplyRunId: expect.stringMatching(/^tplar_/), autoApplyTargetCount: 2 });
    for (const agentId of ['agt_plain', 'agt_second']) {
      expect(await listedOne(agentId)).toMatchObject({ installedVersion: 2, status: 'installed', lastError: null, updateAvailable: false, updatePendingConsent: false });
      // The template's own persona is replaced by the new version's; the armed trigger stays armed.
      expect(await currentPersona(agentId)).toBe('You are v2.');
    }
    expect((await listedOne('agt_plain')).triggers).toEqual([{ key: 'nightly', enabled: true }]);
    expect(await listedOne('agt_base')).toMatchObject({ installedVersion: 1, updateAvailable: true, updatePendingConsent: true, allowCreatorUpdates: false });
    expect(await currentPersona('agt_base')).toBe('You are v1.');

    const audit = await app.store.sql.query<any>(`select action, target_id, details from audit_log where details->>'autoApplyRunId' = $1 order by action, target_id`, [v2.autoApplyRunId]);
    expect(audit.map((a) => [a.action, a.target_id])).toEqual([
      ['templates.autoapply.completed', tpl.id], ['templates.install.updated', 'agt_plain'], ['templates.install.updated', 'agt_second'],
    ]);
    expect(audit[0].details).toMatchObject({ version: 2, targetCount: 2, appliedCount: 2, failed: [] });
  });

  it('skipAutoApply publishes without a fan-out; a template without consenting installs answers no fan-out fields', async () => {
    const v3 = await publish({ skipAutoApply: true, changelog: 'quiet' });
    expect(v3.version).toBe(3);
    expect(v3).not.toHaveProperty('autoApplyRunId');
    expect(v3).not.toHaveProperty('autoApplyTargetCount');
    expect(await listedOne('agt_plain')).toMatchObject({ installedVersion: 2, updateAvailable: true, updatePendingConsent: false });

    const lonely = await createTemplate(app, 'lk_t_all', { creatorOrgId: 'org_acme', name: 'lonely', displayName: 'Lonely' });
    const first = await publishVersion(app, 'lk_t_all', lonely.id, {});
    expect(first).not.toHaveProperty('autoApplyRunId');
  });

  it('an apply refused for one install leaves it at its version with lastError and does not stop the others', async () => {
    const v4 = await publish({ envContract: { API_KEY: { description: 'the key', required: true } } });
    expect(v4).toMatchObject({ version: 4, autoApplyTargetCount: 2 });
    expect(await listedOne('agt_plain')).toMatchObject({ installedVersion: 2, status: 'apply_failed', lastError: expect.stringContaining('ENV_VALUE_REQUIRED'), updateAvailable: true });
    expect(await listedOne('agt_second')).toMatchObject({ installedVersion: 4, status: 'installed', lastError: null });
    const [done] = await app.store.sql.query<any>(`select details from audit_log where action = 'templates.autoapply.completed' and details->>'autoApplyRunId' = $1`, [v4.autoApplyRunId]);
    expect(done.details).toMatchObject({ targetCount: 2, appliedCount: 1, failed: [{ agentId: 'agt_plain', code: 'ENV_VALUE_REQUIRED' }] });
    const all = await app.store.sql.query<any>(`select details from audit_log where action like 'templates.%'`);
    expect(JSON.stringify(all)).not.toContain('k-second-secret');
  });

  it('refuses an apply over a persona the agent changed with 409 MODIFIED_SINCE_INSTALL; update-preview lists it as drifted', async () => {
    const changed = await call(app, 'POST', '/developer/agents/agt_second/persona/version', { token: 'sess_ann', body: { persona: 'My own words.' } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(201);
    await publish({ skipAutoApply: true, personaTemplate: 'You are v5.' });

    const preview = await call(app, 'GET', `/agents/agt_second/templates/${tpl.id}/update-preview`, { token: 'lk_t_read' });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ fromVersion: 4, toVersion: 5, driftedPrimitives: ['persona/agt_second'] });
    // The agent without a change has nothing drifted.
    expect((await call(app, 'GET', `/agents/agt_plain/templates/${tpl.id}/update-preview`, { token: 'lk_t_read' })).body.driftedPrimitives).toEqual([]);

    const refused = await install('agt_second', { version: 5 });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ code: 'MODIFIED_SINCE_INSTALL', message: expect.any(String), primitives: ['persona/agt_second'] });
    expect(await listedOne('agt_second')).toMatchObject({ installedVersion: 4, status: 'installed' });
    expect(await currentPersona('agt_second')).toBe('My own words.');
    // Accepting another primitive is not accepting this one.
    expect((await install('agt_second', { version: 5, acceptModifiedPrimitives: ['persona/agt_plain'] })).status).toBe(409);
    // A re-install that does not write the persona again is not refused.
    const triggers = await install('agt_second', { version: 4, triggerOverrides: { nightly: { enabled: true } } });
    expect(triggers.status, JSON.stringify(triggers.body)).toBe(201);
    expect(triggers.body).toMatchObject({ installedVersion: 4, armedTriggers: ['nightly'] });
  });

  it('an auto-apply skips an install whose persona the agent changed, and applies the others', async () => {
    // agt_plain takes the value v4 requires, by a re-install onto v5 (its persona is still the template's: no refusal).
    const plain = await install('agt_plain', { version: 5, envValues: { API_KEY: 'k-plain-secret' } });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(await currentPersona('agt_plain')).toBe('You are v5.');

    const v6 = await publish({ personaTemplate: 'You are v6.' });
    expect(v6).toMatchObject({ version: 6, autoApplyTargetCount: 2 });
    expect(await listedOne('agt_plain')).toMatchObject({ installedVersion: 6, status: 'installed', lastError: null });
    expect(await currentPersona('agt_plain')).toBe('You are v6.');
    expect(await listedOne('agt_second')).toMatchObject({
      installedVersion: 4, status: 'apply_failed', lastError: expect.stringContaining('MODIFIED_SINCE_INSTALL'), updateAvailable: true,
    });
    expect(await currentPersona('agt_second')).toBe('My own words.');
    const [failed] = await app.store.sql.query<any>(`select details from audit_log where action = 'templates.install.failed' and target_id = 'agt_second'`);
    expect(failed.details).toMatchObject({ reason: 'MODIFIED_SINCE_INSTALL', primitives: ['persona/agt_second'], autoApplyRunId: v6.autoApplyRunId });
  });

  it('acceptModifiedPrimitives applies the version over the change; nothing is drifted after', async () => {
    const accepted = await install('agt_second', { version: 6, acceptModifiedPrimitives: ['persona/agt_second'] });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body).toMatchObject({ installedVersion: 6, status: 'installed', lastError: null, personaSkipped: false });
    expect(await currentPersona('agt_second')).toBe('You are v6.');
    expect(await listedOne('agt_second')).toMatchObject({ updateAvailable: false, lastError: null });
    const preview = await call(app, 'GET', `/agents/agt_second/templates/${tpl.id}/update-preview?toVersion=5`, { token: 'lk_t_read' });
    expect(preview.body.driftedPrimitives).toEqual([]);
  });
});
