/**
 * The install service over the template ports (install-service.ts): an install calls each port
 * (skills, persona, workflows: migrateRuns and the onInstall start) on its one unit of work, and a
 * port that fails undoes everything the others did, the install record included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../../src/store/store.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { applySeed } from '../../../../src/seed/apply.js';
import type { Principal } from '../../../../src/api/kernel/auth.js';
import type { TemplatePorts } from '../../../../src/modules/platform-deps.js';
import type { UnitOfWork } from '../../../../src/store/unit-of-work.js';
import { createTemplatesService } from '../../../../src/modules/templates/service.js';
import { createInstallService } from '../../../../src/modules/templates/index.js';

const ANN: Principal = { kind: 'session', userId: 'usr_ann', keyOrgId: undefined, scopes: null, agentGrants: [], credentialId: 'ses_test' };
const AGENT = { id: 'agt_a', orgId: 'org_a', version: '7' };

describe('template install service and its ports', () => {
  let store: Store;
  let templateId: string;
  const calls: string[] = [];
  let failPersona = false;

  /** Ports that record their calls and write a marker row on the unit of work they are handed. */
  const mark = (tx: UnitOfWork, what: string) => tx.sql.query('insert into port_marks (what) values ($1)', [what]);
  const ports: TemplatePorts = {
    persona: {
      async apply(tx, a) {
        calls.push(`persona.apply ${a.agentId} ${JSON.stringify(a.persona)} overwrite=${a.overwrite}`);
        await mark(tx, 'persona');
        if (failPersona) throw new Error('persona store refused');
        return { applied: true, version: 1 };
      },
      digest: async () => 'persona-digest',
    },
    workflows: {
      snapshot: async () => [],
      async start(tx, s) {
        calls.push(`workflows.start ${s.agentId} ${s.workflowName} ${JSON.stringify(s.input)}`);
        await mark(tx, 'start');
        return { outcome: 'started', runId: 'wfr_fake', status: 'queued' };
      },
      async migrateRuns(tx, m) {
        calls.push(`workflows.migrateRuns ${m.agentId} ${m.strategy} ${m.onIncompatible} ${m.include} ${JSON.stringify(m.workflowNames)}`);
        await mark(tx, 'migrate');
        return { migrationIds: ['wfm_fake'], counts: { resumed: 1, cancelled: 0, reseeded: 0, left: 0 }, skipped: [] };
      },
      wake: () => calls.push('workflows.wake'),
    },
    skills: {
      async install(tx, i) {
        calls.push(`skills.install ${i.agentId} ${i.skillId} ${i.version ?? '-'} ${Object.keys(i.envValues ?? {}).join(',')}`);
        await mark(tx, 'skill');
        return { outcome: 'installed', version: '1.0.0' };
      },
    },
  };

  beforeAll(async () => {
    store = await openStore({ dataDir: 'memory://', migrations: familyMigrations });
    await applySeed(store.sql, {
      orgs: [{ id: 'org_a', name: 'A', plan: 'standard', archived: false }],
      users: [{ id: 'usr_ann', email: 'ann@a.test', memberships: [{ orgId: 'org_a', role: 'admin' }] }],
      agents: [{ id: 'agt_a', orgId: 'org_a', name: 'a', visibility: 'org', version: '7', baseAgent: false }],
      apiKeys: [], sessions: [],
    });
    await store.sql.query('create table port_marks (what text not null)');
    const templates = createTemplatesService({ store });
    templateId = (await templates.create(ANN, { creatorOrgId: 'org_a', name: 't', displayName: 'T' })).id;
    await templates.publish(ANN, templateId, {
      marketplaceSkills: [{ skillId: 'msk_one', version: '1.0.0' }], personaTemplate: 'Be kind.', onInstall: { workflow: 'setup', input: { x: 1 } },
      envContract: { TOKEN: { description: 't', required: true } },
    });
  });
  afterAll(async () => store?.close());

  const service = () => createInstallService({ store, templates: createTemplatesService({ store }), ports });
  const request = { envValues: { TOKEN: 'secret' }, migrateRuns: { strategy: 'resume-on-new' as const, keys: ['setup'] } };

  it('undoes every port\'s writes and leaves no install when a port fails', async () => {
    failPersona = true;
    calls.length = 0;
    await expect(service().install(ANN, templateId, AGENT, request)).rejects.toThrow('persona store refused');
    expect(calls.filter((c) => c !== 'workflows.wake')).toEqual(['skills.install agt_a msk_one 1.0.0 TOKEN', 'persona.apply agt_a "Be kind." overwrite=false']);
    expect(await store.sql.query('select what from port_marks')).toEqual([]);
    expect(await store.sql.query('select 1 from template_installs')).toEqual([]);
    expect(await store.sql.query(`select 1 from audit_log where action like 'templates.install.%'`)).toEqual([]);
  });

  it('calls each port on the install\'s unit of work, then wakes the executor', async () => {
    failPersona = false;
    calls.length = 0;
    const result = await service().install(ANN, templateId, AGENT, request);
    expect(calls).toEqual([
      'skills.install agt_a msk_one 1.0.0 TOKEN',
      'persona.apply agt_a "Be kind." overwrite=false',
      'workflows.migrateRuns agt_a resume-on-new leave all ["setup"]',
      'workflows.start agt_a setup {"x":1}',
      'workflows.wake',
    ]);
    expect(result).toMatchObject({ status: 'installed', appliedAgentVersion: '7', personaSkipped: false, onInstallWorkflowRunId: 'wfr_fake', migration: { migrationIds: ['wfm_fake'] } });
    expect((await store.sql.query<{ what: string }>('select what from port_marks order by what')).map((r) => r.what)).toEqual(['migrate', 'persona', 'skill', 'start']);
  });

  it('applyInstall on a deploy\'s unit of work marks a minted agent and defers the hook', async () => {
    calls.length = 0;
    const templates = createTemplatesService({ store });
    const s = createInstallService({ store, templates, ports });
    const minted = await store.tenancy.createAgent({ orgId: 'org_a', name: 'minted', visibility: 'org' });
    const template = await templates.visibleTemplate(ANN, templateId);
    const result = await store.unitOfWork(async (tx) => s.applyInstall(tx, {
      principal: ANN, template, version: await templates.installableVersion(template, undefined, 'latest', tx.sql),
      agent: { id: minted.id, orgId: 'org_a', version: null }, request: { envValues: { TOKEN: 't' } }, minted: true, deferOnInstall: true,
    }));
    expect(result).toMatchObject({ status: 'installed', onInstallDeferred: true, onInstallFired: false });
    expect(calls.some((c) => c.startsWith('workflows.start'))).toBe(false);
    const [row] = await store.sql.query<{ minted: boolean }>('select minted from template_installs where agent_id = $1', [minted.id]);
    expect(row!.minted).toBe(true);
  });

  it('a store failure during the creator-update fan-out undoes the publish with it; a later publish fans out to every consenting install', async () => {
    const s = service();
    const agents = (await store.sql.query<{ agent_id: string }>('select agent_id from template_installs where template_id = $1 order by agent_id', [templateId])).map((r) => r.agent_id);
    expect(agents).toHaveLength(2);
    for (const agentId of agents) await s.setConsent(ANN, templateId, agentId, true);
    const marks = async () => (await store.sql.query('select what from port_marks')).length;
    const before = await marks();

    failPersona = true;
    calls.length = 0;
    await expect(s.publish(ANN, templateId, { personaTemplate: 'Be kinder.' })).rejects.toThrow('persona store refused');
    expect(calls.filter((c) => c.startsWith('persona.apply'))).toHaveLength(1);
    expect(await store.sql.query('select version from template_versions where template_id = $1', [templateId])).toEqual([{ version: 1 }]);
    expect((await store.sql.query<{ installed_version: number }>('select installed_version from template_installs where template_id = $1', [templateId])).map((r) => r.installed_version)).toEqual([1, 1]);
    expect(await marks()).toBe(before);
    // Only the first version's publish (in beforeAll) is recorded.
    expect(await store.sql.query(`select action from audit_log where action in ('templates.autoapply.completed', 'templates.version.published')`)).toEqual([
      { action: 'templates.version.published' },
    ]);

    failPersona = false;
    calls.length = 0;
    const published = await s.publish(ANN, templateId, { personaTemplate: 'Be kinder.' });
    expect(published.version.version).toBe(2);
    expect(published.autoApply).toMatchObject({ runId: expect.stringMatching(/^tplar_/), targetCount: 2, failed: [] });
    // Both personas were the template's (their digest unchanged): the new version's replaces them.
    expect(calls.filter((c) => c.startsWith('persona.apply')).sort()).toEqual(agents.map((a) => `persona.apply ${a} "Be kinder." overwrite=true`).sort());
    expect((await store.sql.query<{ installed_version: number }>('select installed_version from template_installs where template_id = $1', [templateId])).map((r) => r.installed_version)).toEqual([2, 2]);
  });
});
