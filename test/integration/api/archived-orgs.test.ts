/**
 * Archived organizations (spec 01 part 7.2, CONTRACT part 7): on an organization the seed file
 * marks archived, a mutation of every family answers 423 ORG_ARCHIVED in the family's error shape
 * and a read is served; the same mutations on an organization that is not archived go through.
 * The two routes declared served (RCS capability checks, channel receipts) are not refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi, type TestApi } from '../../helpers/api-app.js';
import { record } from '../../helpers/records.js';

function writeSeed(): string {
  const org = (id: string, archived: boolean) => ({ id, name: id, plan: 'standard', archived });
  const key = (k: string, orgId: string, scopes: string[]) => ({ key: k, ownerId: 'usr_ann', orgId, scopes, agentGrants: [], status: 'active' });
  const quick = (id: string, agentId: string) => ({
    id, agentId, name: 'quick', form: 'graph', activeVersionId: `${id}_1`, versions: [{ id: `${id}_1`, graph: { steps: [{ id: 'a', kind: 'noop' }] } }],
  });
  const seed = {
    orgs: [org('org_arch', true), org('org_live', false)],
    users: [{ id: 'usr_ann', email: 'ann@acme.test', memberships: [{ orgId: 'org_arch', role: 'admin' }, { orgId: 'org_live', role: 'admin' }] }],
    agents: [
      { id: 'agt_arch', orgId: 'org_arch', name: 'arch-bot', visibility: 'org', version: '1' },
      { id: 'agt_live', orgId: 'org_live', name: 'live-bot', visibility: 'org', version: '1' },
    ],
    apiKeys: [
      key('lk_arch_ingest', 'org_arch', ['logs:ingest']), key('lk_live_ingest', 'org_live', ['logs:ingest']),
      key('lk_arch_receipts', 'org_arch', ['channels:receipts']),
      key('lk_arch_tel', 'org_arch', ['telephony:read', 'telephony:write', 'telephony:manage']),
      key('lk_live_tel', 'org_live', ['telephony:read', 'telephony:write', 'telephony:manage']),
    ],
    // An admin of both: every scope (sensitive ones included) on each.
    sessions: [{ token: 'sess_ann', userId: 'usr_ann', revoked: false }],
    inboundMessages: ['agt_arch', 'agt_live'].map((agentId) => ({
      agentId, userId: 'usr_sms', channel: 'sms', address: '+15550003333', messageId: `sms_${agentId}`, receivedAt: new Date(Date.now() - 60_000).toISOString(),
    })),
    workflows: [quick('wf_arch', 'agt_arch'), quick('wf_live', 'agt_live')],
    skills: ['arch', 'live'].map((o) => ({ id: `skl_${o}`, orgId: `org_${o}`, name: `${o}-lookup`, description: 'looks things up' })),
  };
  const dir = mkdtempSync(join(tmpdir(), 'archived-seed-'));
  const path = join(dir, 'seed.json');
  writeFileSync(path, JSON.stringify(seed));
  return path;
}

let app: TestApi;
beforeAll(async () => {
  app = await startApi({ SEED_FILE: writeSeed(), DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', WORKFLOW_EXECUTOR: 'false' });
});
afterAll(async () => {
  await app?.stop();
});

const ADMIN = 'sess_ann';
const call = (method: string, path: string, body?: unknown, token = ADMIN) => app.request(method, path, { token, ...(body !== undefined ? { body } : {}) });

/** A mutation of each family, on an organization (`org`) and its agent (`agent`), with the status it answers when allowed. */
interface Mutation {
  family: string;
  run: (org: 'arch' | 'live') => Promise<{ status: number; body: any }>;
  allowed: number;
  /** The family's error body for ORG_ARCHIVED, but for `message`. */
  shape: Record<string, unknown>;
}
const conventions = { statusCode: 423, error: 'Locked', code: 'ORG_ARCHIVED' };
const mutations: Mutation[] = [
  {
    family: 'drains', allowed: 201, shape: conventions,
    run: (o) => call('POST', `/admin/orgs/org_${o}/log-drains`, { name: 'd1', type: 'http', endpoint: 'https://localhost:9/in' }),
  },
  {
    family: 'ingest', allowed: 202, shape: conventions,
    run: (o) => call('POST', '/internal/records', [record({ orgId: `org_${o}`, agentId: `agt_${o}` })], `lk_${o}_ingest`),
  },
  {
    family: 'telephony (organization route)', allowed: 201, shape: conventions,
    run: (o) => call('POST', `/developer/orgs/org_${o}/sip-trunks`, { acl: ['203.0.113.0/24'] }, `lk_${o}_tel`),
  },
  {
    family: 'telephony (agent route)', allowed: 201, shape: conventions,
    run: (o) => call('POST', `/developer/voice-agents/agt_${o}`, { name: 'front-desk' }),
  },
  {
    family: 'channels', allowed: 200, shape: conventions,
    run: (o) => call('POST', `/developer/agents/agt_${o}/channels/send`, { channel: 'sms', to: { userId: 'usr_sms' }, text: 'hello' }),
  },
  {
    family: 'persona', allowed: 201, shape: conventions,
    run: (o) => call('POST', `/developer/agents/agt_${o}/persona/version`, { persona: 'You are the support bot.' }),
  },
  {
    // A skill's organization is its creator's, not in the path: the family applies the rule itself.
    family: 'skills', allowed: 201, shape: conventions,
    run: (o) => call('POST', '/marketplace/skills/list', { sourceSkillId: `skl_${o}`, displayName: `${o} lookup` }),
  },
  {
    family: 'workflows (start)', allowed: 202, shape: { statusCode: 423, code: 'ORG_ARCHIVED' },
    run: (o) => call('POST', `/workflows/agt_${o}/runs`, { workflowName: 'quick' }),
  },
  {
    family: 'workflows (batch)', allowed: 202, shape: { statusCode: 423, code: 'ORG_ARCHIVED' },
    run: (o) => call('POST', `/workflows/agt_${o}/runs/batch`, { workflowName: 'quick', items: [{ idempotencyKey: `k-${o}` }] }),
  },
];

/** A read of each family on the archived organization. */
const reads: [string, string, string?][] = [
  ['drains', '/admin/orgs/org_arch/log-drains'],
  ['log reads (ingest)', '/admin/orgs/org_arch/logs'],
  ['telephony', '/developer/orgs/org_arch/sip-trunks', 'lk_arch_tel'],
  ['channels', '/developer/agents/agt_arch/channels/deliveries'],
  ['persona', '/developer/agents/agt_arch/persona/versions'],
  ['workflows', '/workflows/agt_arch/runs'],
  ['skills', '/marketplace/orgs/org_arch/skills'],
];

describe('an archived organization', () => {
  for (const m of mutations) {
    it(`refuses a ${m.family} mutation with 423 ORG_ARCHIVED, in the family's shape`, async () => {
      const res = await m.run('arch');
      expect(res.status, JSON.stringify(res.body)).toBe(423);
      expect(res.body).toEqual({ ...m.shape, orgId: 'org_arch', message: 'The organization org_arch is archived: it can be read, not changed.' });
    });
  }

  for (const [family, path, token] of reads) {
    it(`serves a ${family} read`, async () => {
      const res = await call('GET', path, undefined, token);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    });
  }

  it('changed nothing: the refused mutations left no drain, run, trunk or delivery', async () => {
    const count = async (table: string, where: string) =>
      (await app.store.sql.query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`))[0]!.n;
    expect(await count('drains', "org_id = 'org_arch'")).toBe(0);
    expect(await count('workflow_runs', "org_id = 'org_arch'")).toBe(0);
    expect((await call('GET', '/developer/orgs/org_arch/sip-trunks', undefined, 'lk_arch_tel')).body).toMatchObject({ trunks: [] });
    expect((await call('GET', '/developer/agents/agt_arch/channels/deliveries')).body.data).toEqual([]);
  });

  it('refuses a delete too, before looking the resource up', async () => {
    const res = await call('DELETE', '/admin/orgs/org_arch/log-drains/drn_missing');
    expect(res.status).toBe(423);
    expect(res.body.code).toBe('ORG_ARCHIVED');
  });

  it('answers a credential that cannot see the organization as before, not with 423', async () => {
    const res = await call('POST', '/developer/orgs/org_arch/sip-trunks', { acl: ['203.0.113.0/24'] }, 'lk_live_tel');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('RESOURCE_NOT_PROJECTED');
  });

  it('serves the routes declared served: an RCS capability check and a vendor receipt', async () => {
    // No RCS agent here: the check runs and says so, instead of being refused.
    const check = await call('POST', '/developer/orgs/org_arch/rcs-agents/rcs_missing/capability-check', { phoneNumber: '+15550003333' }, 'lk_arch_tel');
    expect(check.status, JSON.stringify(check.body)).toBe(404);
    const receipt = await call('POST', '/developer/channels/receipts', { type: 'status', provider: 'sandbox-sms', eventId: 'evt_arch_1', messageId: 'msg_unknown', status: 'delivered' }, 'lk_arch_receipts');
    expect(receipt.status, JSON.stringify(receipt.body)).toBe(200);
  });
});

describe('an organization that is not archived', () => {
  for (const m of mutations) {
    it(`lets the same ${m.family} mutation through`, async () => {
      const res = await m.run('live');
      expect(res.status, JSON.stringify(res.body)).toBe(m.allowed);
    });
  }
});
