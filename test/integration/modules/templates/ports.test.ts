/**
 * The families' parts of a template install (platform-deps.ts TemplatePorts), on both stores with
 * every family's tables: each writes on the caller's unit of work (a failing unit leaves nothing),
 * persona apply keeps a served persona unless asked to overwrite, a workflow start is a `template`
 * run through the admission, migrateRuns moves parked runs by its strategy, and a skill install
 * follows the install route's rules with its env values sealed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../../src/store/store.js';
import { familyMigrations, createTemplatePorts } from '../../../../src/modules/index.js';
import { applySeed } from '../../../../src/seed/apply.js';
import { workflowsSeed } from '../../../../src/modules/workflows/seed.js';
import type { TemplatePorts } from '../../../../src/modules/platform-deps.js';
import { createLogger } from '../../../../src/telemetry/logger.js';
import { createTestDatabase } from '../../../helpers/postgres.js';

const KINDS = [
  { name: 'pglite', open: async () => { const store = await openStore({ dataDir: 'memory://', migrations: familyMigrations }); return { store, dispose: () => store.close() }; } },
  {
    name: 'postgres',
    open: async () => {
      const db = await createTestDatabase();
      const store = await openStore({ databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations });
      return { store, dispose: async () => { await store.close(); await db.drop(); } };
    },
  },
];

const ACTOR = { orgId: 'org_p', userId: 'usr_p' };
const steps = (...ids: string[]) => ({ steps: ids.map((id) => ({ id, kind: 'noop' })) });

describe.each(KINDS)('template ports on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let ports: TemplatePorts;
  let woken = 0;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
    const built = createTemplatePorts({ store, logger: createLogger('error', 'test') });
    ports = { ...built, workflows: { ...built.workflows, wake: () => { woken++; built.workflows.wake(); } } };
    await applySeed(store.sql, {
      orgs: [{ id: 'org_p', name: 'P', plan: 'standard', archived: false }, { id: 'org_q', name: 'Q', plan: 'standard', archived: false }],
      users: [{ id: 'usr_p', email: 'p@p.test', memberships: [{ orgId: 'org_p', role: 'admin' }] }],
      agents: ['agt_p1', 'agt_p2', 'agt_p3'].map((id) => ({ id, orgId: 'org_p', name: id, visibility: 'org' as const, version: '1', baseAgent: false })),
      apiKeys: [], sessions: [],
      sections: [{
        section: workflowsSeed,
        items: [
          { id: 'wf_setup', agentId: 'agt_p1', name: 'setup', form: 'graph', activeVersionId: 'wfv_setup_1', versions: [{ id: 'wfv_setup_1', graph: steps('a'), inputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } } }] },
          { id: 'wf_flow', agentId: 'agt_p2', name: 'flow', form: 'graph', activeVersionId: 'wfv_flow_1', versions: [{ id: 'wfv_flow_1', graph: steps('a', 'b') }, { id: 'wfv_flow_2', graph: steps('a', 'b') }, { id: 'wfv_flow_3', graph: steps('x') }] },
          { id: 'wf_draft', agentId: 'agt_p1', name: 'draft-only', form: 'graph', versions: [{ id: 'wfv_draft_1', graph: steps('a') }] },
        ],
      }],
    });
  });
  afterAll(async () => dispose());

  describe('persona', () => {
    it('applies a persona as the current version, keeps a served one unless overwritten, and writes nothing when the unit fails', async () => {
      const first = await store.unitOfWork((tx) => ports.persona.apply(tx, { ...ACTOR, agentId: 'agt_p1', persona: 'You are P.', overwrite: false }));
      expect(first).toEqual({ applied: true, version: 1 });
      const kept = await store.unitOfWork((tx) => ports.persona.apply(tx, { ...ACTOR, agentId: 'agt_p1', persona: 'Other', overwrite: false }));
      expect(kept).toEqual({ applied: false, reason: 'persona-exists' });
      const over = await store.unitOfWork((tx) => ports.persona.apply(tx, { ...ACTOR, agentId: 'agt_p1', persona: { base: 'B' }, overwrite: true }));
      expect(over).toEqual({ applied: true, version: 2 });
      await expect(store.unitOfWork(async (tx) => {
        await ports.persona.apply(tx, { ...ACTOR, agentId: 'agt_p1', persona: 'rolled back', overwrite: true });
        throw new Error('install refused');
      })).rejects.toThrow('install refused');
      const rows = await store.sql.query<{ version: number; persona: unknown }>('select version, persona from persona_versions where agent_id = $1 order by version', ['agt_p1']);
      expect(rows).toEqual([{ version: 1, persona: 'You are P.' }, { version: 2, persona: { base: 'B' } }]);
      const [state] = await store.sql.query<{ current_version: number }>('select current_version from persona_agents where agent_id = $1', ['agt_p1']);
      expect(state!.current_version).toBe(2);
    });

    it('digests the current persona: null without one, the same for the same content in any key order, another after a change', async () => {
      expect(await ports.persona.digest(store.sql, 'agt_p3')).toBeNull();
      await store.unitOfWork((tx) => ports.persona.apply(tx, { ...ACTOR, agentId: 'agt_p3', persona: { base: 'B', voice: 'V' }, overwrite: false }));
      const applied = await ports.persona.digest(store.sql, 'agt_p3');
      expect(applied).toMatch(/^[0-9a-f]{64}$/);
      // The same content as a later version, its keys in another order: the same digest.
      await store.unitOfWork((tx) => ports.persona.apply(tx, { ...ACTOR, agentId: 'agt_p3', persona: { voice: 'V', base: 'B' }, overwrite: true }));
      expect(await store.unitOfWork((tx) => ports.persona.digest(tx.sql, 'agt_p3'))).toBe(applied);
      await store.unitOfWork((tx) => ports.persona.apply(tx, { ...ACTOR, agentId: 'agt_p3', persona: { base: 'B', voice: 'changed' }, overwrite: true }));
      expect(await ports.persona.digest(store.sql, 'agt_p3')).not.toBe(applied);
    });
  });

  describe('workflows', () => {
    it('snapshots the agent workflows that have an active version', async () => {
      const snap = await ports.workflows.snapshot(store.sql, 'agt_p1');
      expect(snap).toEqual([expect.objectContaining({ key: 'setup', workflowId: 'wf_setup', version: 'wfv_setup_1', form: 'graph', stepCount: 1, inputSchema: expect.any(Object) })]);
    });

    it('starts a template run, refuses input the schema refuses, and answers not-found for an unknown or inactive workflow', async () => {
      const started = await store.unitOfWork((tx) => ports.workflows.start(tx, { ...ACTOR, agentId: 'agt_p1', workflowName: 'setup', input: { n: 1 } }));
      expect(started).toMatchObject({ outcome: 'started', status: 'queued' });
      const runId = (started as { runId: string }).runId;
      const [run] = await store.sql.query<{ trigger: string; workflow_version_id: string; created_by: string }>('select trigger, workflow_version_id, created_by from workflow_runs where id = $1', [runId]);
      expect(run).toEqual({ trigger: 'template', workflow_version_id: 'wfv_setup_1', created_by: 'usr_p' });
      const refused = await store.unitOfWork((tx) => ports.workflows.start(tx, { ...ACTOR, agentId: 'agt_p1', workflowName: 'setup', input: { n: 'x' } }));
      expect(refused).toMatchObject({ outcome: 'refused', code: 'VALIDATION_FAILED' });
      expect(await store.unitOfWork((tx) => ports.workflows.start(tx, { ...ACTOR, agentId: 'agt_p1', workflowName: 'nope' }))).toEqual({ outcome: 'not-found' });
      expect(await store.unitOfWork((tx) => ports.workflows.start(tx, { ...ACTOR, agentId: 'agt_p1', workflowName: 'draft-only' }))).toEqual({ outcome: 'not-found' });
      ports.workflows.wake();
      expect(woken).toBe(1);
    });

    it('leaves no run when the unit holding the start fails', async () => {
      let runId = '';
      await expect(store.unitOfWork(async (tx) => {
        runId = ((await ports.workflows.start(tx, { ...ACTOR, agentId: 'agt_p1', workflowName: 'setup', input: { n: 2 } })) as { runId: string }).runId;
        throw new Error('install refused');
      })).rejects.toThrow('install refused');
      expect(runId).toMatch(/^wfr_/);
      expect(await store.sql.query('select 1 from workflow_runs where id = $1', [runId])).toEqual([]);
    });

    /** A suspended run of `flow` pinned to `versionId`. */
    const parkedRun = async (versionId: string, graph: object): Promise<string> => {
      const id = `wfr_park_${versionId}_${Math.random().toString(36).slice(2)}`;
      await store.sql.query(
        `insert into workflow_runs (id, org_id, agent_id, workflow_id, workflow_name, workflow_version_id, form, origin, trigger, status, created_by, tags, input, graph, budget, created_at, updated_at)
         values ($1, 'org_p', 'agt_p2', 'wf_flow', 'flow', $2, 'graph', 'definition', 'api', 'suspended', 'usr_p', '[]', '{"k":1}', $3::jsonb, $4::jsonb, now(), now())`,
        [id, versionId, JSON.stringify(graph), JSON.stringify({ maxSteps: 10, maxDurationSeconds: 60, unit: 'credits', spent: { credits: 0, steps: 0 } })],
      );
      return id;
    };
    const statusOf = async (id: string) => (await store.sql.query<{ status: string; workflow_version_id: string }>('select status, workflow_version_id from workflow_runs where id = $1', [id]))[0];

    it('resume-on-new repins runs whose steps fit the active version, and leaves or cancels the others', async () => {
      await store.sql.query(`update workflow_definitions set active_version_id = 'wfv_flow_2' where id = 'wf_flow'`);
      const fits = await parkedRun('wfv_flow_1', steps('a', 'b'));
      await store.sql.query(`update workflow_definitions set active_version_id = 'wfv_flow_3' where id = 'wf_flow'`);
      const misfit = await parkedRun('wfv_flow_1', steps('a', 'b'));
      const leave = await store.unitOfWork((tx) => ports.workflows.migrateRuns(tx, { ...ACTOR, agentId: 'agt_p2', strategy: 'resume-on-new', onIncompatible: 'leave', include: 'all' }));
      // Both runs now differ from version 3, whose single step fits neither.
      expect(leave.counts).toEqual({ resumed: 0, cancelled: 0, reseeded: 0, left: 2 });
      expect(leave.skipped.sort()).toEqual([fits, misfit].sort());
      expect(leave.migrationIds).toHaveLength(1);
      await store.sql.query(`update workflow_definitions set active_version_id = 'wfv_flow_2' where id = 'wf_flow'`);
      const resumed = await store.unitOfWork((tx) => ports.workflows.migrateRuns(tx, { ...ACTOR, agentId: 'agt_p2', strategy: 'resume-on-new', onIncompatible: 'cancel', include: 'suspended' }));
      expect(resumed.counts).toEqual({ resumed: 2, cancelled: 0, reseeded: 0, left: 0 });
      expect(await statusOf(fits)).toEqual({ status: 'suspended', workflow_version_id: 'wfv_flow_2' });
      await store.sql.query(`update workflow_definitions set active_version_id = 'wfv_flow_3' where id = 'wf_flow'`);
      const cancelled = await store.unitOfWork((tx) => ports.workflows.migrateRuns(tx, { ...ACTOR, agentId: 'agt_p2', workflowNames: ['flow'], strategy: 'resume-on-new', onIncompatible: 'cancel', include: 'all' }));
      expect(cancelled.counts).toEqual({ resumed: 0, cancelled: 2, reseeded: 0, left: 0 });
      expect((await statusOf(misfit))!.status).toBe('cancelled');
    });

    it('cancel-and-reseed cancels each in-flight run and starts it anew on the active version with its input', async () => {
      await store.sql.query(`update workflow_definitions set active_version_id = 'wfv_flow_3' where id = 'wf_flow'`);
      const old = await parkedRun('wfv_flow_1', steps('a', 'b'));
      const other = await store.unitOfWork((tx) => ports.workflows.migrateRuns(tx, { ...ACTOR, agentId: 'agt_p2', workflowNames: ['another'], strategy: 'cancel-and-reseed', onIncompatible: 'leave', include: 'all' }));
      expect(other).toEqual({ migrationIds: [], counts: { resumed: 0, cancelled: 0, reseeded: 0, left: 0 }, skipped: [] });
      const m = await store.unitOfWork((tx) => ports.workflows.migrateRuns(tx, { ...ACTOR, agentId: 'agt_p2', strategy: 'cancel-and-reseed', onIncompatible: 'leave', include: 'all', reason: 'template update' }));
      expect(m.counts).toEqual({ resumed: 0, cancelled: 1, reseeded: 1, left: 0 });
      expect((await statusOf(old))!.status).toBe('cancelled');
      const fresh = await store.sql.query<{ status: string; workflow_version_id: string; input: unknown; trigger: string }>(
        `select status, workflow_version_id, input, trigger from workflow_runs where agent_id = 'agt_p2' and trigger = 'template'`);
      expect(fresh).toEqual([{ status: 'queued', workflow_version_id: 'wfv_flow_3', input: { k: 1 }, trigger: 'template' }]);
    });
  });

  describe('skills', () => {
    beforeAll(async () => {
      await store.sql.query(`insert into skills_sources (id, org_id, name) values ('src_a', 'org_p', 'a'), ('src_b', 'org_q', 'b')`);
      await store.sql.query(`insert into skills (id, name, display_name, description, creator_id, creator_org_id, source_skill_id, visibility, created_at, updated_at)
        values ('msk_pub', 'pub', 'Pub', '', 'usr_p', 'org_p', 'src_a', 'public', now(), now()), ('msk_priv', 'priv', 'Priv', '', 'usr_q', 'org_q', 'src_b', 'private', now(), now())`);
      await store.sql.query(`insert into skills_versions (id, skill_id, version, description, env_vars_metadata, approval_status, published, created_by, created_at) values
        ('skv_1', 'msk_pub', '1.0.0', '', '{"TOKEN": {"description": "t", "required": true}}', 'approved', true, 'usr_p', now()),
        ('skv_2', 'msk_pub', '2.0.0', '', null, 'approved', false, 'usr_p', now()),
        ('skv_3', 'msk_priv', '1.0.0', '', null, 'approved', true, 'usr_q', now())`);
    });

    it('installs the newest published version with its env values sealed, once', async () => {
      const missing = await store.unitOfWork((tx) => ports.skills.install(tx, { ...ACTOR, agentId: 'agt_p3', skillId: 'msk_pub' }));
      expect(missing).toMatchObject({ outcome: 'refused', code: 'ENV_VALUE_REQUIRED' });
      const done = await store.unitOfWork((tx) => ports.skills.install(tx, { ...ACTOR, agentId: 'agt_p3', skillId: 'msk_pub', envValues: { TOKEN: 'tok-secret' } }));
      expect(done).toEqual({ outcome: 'installed', version: '1.0.0' });
      const [row] = await store.sql.query<{ env_values: string; version: string }>(`select env_values, version from skills_installs where skill_id = 'msk_pub' and agent_id = 'agt_p3'`);
      expect(row!.env_values).not.toContain('tok-secret');
      expect(JSON.parse(store.secretBox.open(row!.env_values))).toEqual({ TOKEN: 'tok-secret' });
      const again = await store.unitOfWork((tx) => ports.skills.install(tx, { ...ACTOR, agentId: 'agt_p3', skillId: 'msk_pub', envValues: { TOKEN: 'other' } }));
      expect(again).toEqual({ outcome: 'already-installed', version: '1.0.0' });
      const [skill] = await store.sql.query<{ install_count: number }>(`select install_count from skills where id = 'msk_pub'`);
      expect(skill!.install_count).toBe(1);
    });

    it('refuses an unpublished version and a skill the organization cannot see, and writes nothing when the unit fails', async () => {
      expect(await store.unitOfWork((tx) => ports.skills.install(tx, { ...ACTOR, agentId: 'agt_p2', skillId: 'msk_pub', version: '2.0.0' })))
        .toMatchObject({ outcome: 'refused', code: 'SKILL_VERSION_NOT_PUBLISHED' });
      expect(await store.unitOfWork((tx) => ports.skills.install(tx, { ...ACTOR, agentId: 'agt_p2', skillId: 'msk_priv' })))
        .toMatchObject({ outcome: 'refused', code: 'SKILL_NOT_FOUND' });
      await expect(store.unitOfWork(async (tx) => {
        expect(await ports.skills.install(tx, { ...ACTOR, agentId: 'agt_p2', skillId: 'msk_pub', envValues: { TOKEN: 't' } })).toMatchObject({ outcome: 'installed' });
        throw new Error('install refused');
      })).rejects.toThrow('install refused');
      expect(await store.sql.query(`select 1 from skills_installs where agent_id = 'agt_p2'`)).toEqual([]);
    });
  });
});
