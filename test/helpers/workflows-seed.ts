/** A seed file for the workflow suites: two organizations, people and keys of every scope mix, definitions and a policy. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const WF_BASE = '/workflows/agt_support';

export function writeWorkflowsSeed(policy: Record<string, unknown> = { maxConcurrentRuns: 500 }): string {
  const key = (k: string, scopes: string[] | null, ownerId = 'usr_ann', orgId = 'org_acme') => ({ key: k, ownerId, orgId, scopes, agentGrants: [], status: 'active' });
  const seed = {
    orgs: [
      { id: 'org_acme', name: 'Acme', plan: 'standard' },
      { id: 'org_globex', name: 'Globex', plan: 'standard' },
    ],
    users: [
      { id: 'usr_ann', email: 'ann@acme.test', memberships: [{ orgId: 'org_acme', role: 'admin' }] },
      { id: 'usr_max', email: 'max@acme.test', memberships: [{ orgId: 'org_acme', role: 'member' }] },
      { id: 'usr_gus', email: 'gus@globex.test', memberships: [{ orgId: 'org_globex', role: 'admin' }] },
    ],
    agents: [
      { id: 'agt_support', orgId: 'org_acme', name: 'support-bot', visibility: 'org', version: '1' },
      { id: 'agt_other', orgId: 'org_acme', name: 'other-bot', visibility: 'org', version: '1' },
      { id: 'agt_globex', orgId: 'org_globex', name: 'globex-bot', visibility: 'org', version: '1' },
    ],
    apiKeys: [
      key('lk_wf_read', ['workflows:read']),
      key('lk_wf_outputs', ['workflows:read', 'workflows:read-outputs']),
      key('lk_wf_exec', ['workflows:read', 'workflows:execute']),
      key('lk_wf_all', ['workflows:*']),
      key('lk_wf_none', ['logs:manage']),
      key('lk_wf_max', ['workflows:*'], 'usr_max'),
      key('lk_wf_globex', ['workflows:*'], 'usr_gus', 'org_globex'),
    ],
    sessions: [
      { token: 'sess_ann', userId: 'usr_ann', revoked: false },
      { token: 'sess_max', userId: 'usr_max', revoked: false },
    ],
    workflows: [
      {
        id: 'wf_report', agentId: 'agt_support', name: 'nightly-report', description: 'the nightly report', form: 'graph', activeVersionId: 'wfv_report_2',
        versions: [
          { id: 'wfv_report_1', inputSchema: { type: 'object', required: ['day'], properties: { day: { type: 'string' } } },
            graph: { steps: [{ id: 'fetch', kind: 'noop' }, { id: 'out', kind: 'output', value: { ok: true } }] } },
          { id: 'wfv_report_2', inputSchema: { type: 'object', required: ['day'], properties: { day: { type: 'string' }, level: { enum: ['low', 'high'] } } },
            graph: { steps: [{ id: 'fetch', kind: 'noop' }, { id: 'out', kind: 'output', value: 'v2' }] } },
        ],
      },
      { id: 'wf_slow', agentId: 'agt_support', name: 'slow', form: 'graph', activeVersionId: 'wfv_slow_1',
        versions: [{ id: 'wfv_slow_1', graph: { steps: [{ id: 'nap', kind: 'sleep', ms: 1500 }, { id: 'done', kind: 'output', value: 'slept' }] } }] },
      { id: 'wf_script', agentId: 'agt_support', name: 'scripted', form: 'script', activeVersionId: 'wfv_script_1', versions: [{ id: 'wfv_script_1', script: 'return 1' }] },
      { id: 'wf_composed', agentId: 'agt_support', name: 'composed', form: 'graph', dynamic: true, activeVersionId: 'wfv_composed_1',
        versions: [{ id: 'wfv_composed_1', graph: { steps: [{ id: 'a', kind: 'noop' }] } }] },
      { id: 'wf_draft', agentId: 'agt_support', name: 'draft-only', form: 'graph', versions: [{ id: 'wfv_draft_1', graph: { steps: [{ id: 'a', kind: 'noop' }] } }] },
      { id: 'wf_flaky', agentId: 'agt_support', name: 'flaky', form: 'graph', activeVersionId: 'wfv_flaky_1',
        versions: [{ id: 'wfv_flaky_1', graph: { steps: [{ id: 'try', kind: 'fail', times: 2, retries: 1, code: 'UPSTREAM_DOWN' }, { id: 'end', kind: 'output', value: 1 }] } }] },
      // An output over the 256 KB inline bound (only a deployed definition can make one: an inline graph is itself bounded).
      { id: 'wf_big', agentId: 'agt_support', name: 'big-output', form: 'graph', activeVersionId: 'wfv_big_1',
        versions: [{ id: 'wfv_big_1', graph: { steps: [{ id: 'a', kind: 'output', value: 'y'.repeat(300_000) }] } }] },
      { id: 'wf_other', agentId: 'agt_other', name: 'other', form: 'graph', activeVersionId: 'wfv_other_1', versions: [{ id: 'wfv_other_1', graph: { steps: [{ id: 'a', kind: 'noop' }] } }] },
      // Globex runs one run at a time: the concurrency cap's suites use it.
      { id: 'wf_g_slow', agentId: 'agt_globex', name: 'slow', form: 'graph', activeVersionId: 'wfv_g_slow_1',
        versions: [{ id: 'wfv_g_slow_1', graph: { steps: [{ id: 'nap', kind: 'sleep', ms: 400 }] } }] },
    ],
    workflowPolicies: [{ orgId: 'org_acme', ...policy }, { orgId: 'org_globex', maxConcurrentRuns: 1 }],
  };
  const dir = mkdtempSync(join(tmpdir(), 'workflows-seed-'));
  const path = join(dir, 'seed.json');
  writeFileSync(path, JSON.stringify(seed));
  return path;
}
