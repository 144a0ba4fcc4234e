/** RCS agents (spec 02 parts 2.3, 3, 4.3, 5, 7, 8; contract telephony T2, T5) through HTTP against the started service. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startTelephonyApi } from '../../../helpers/telephony.js';

const ACME = '/developer/orgs/org_acme/rcs-agents';
const GLOBEX = '/developer/orgs/org_globex/rcs-agents';
const ALL = 'lk_tel_all';
const GUS = 'lk_globex_tel';

/** `count` distinct possible US numbers, +1415555NNNN from `from`. */
const usNumbers = (count: number, from = 0): string[] => Array.from({ length: count }, (_, i) => `+1415${String(5550000 + from + i)}`);

describe('RCS agent routes', () => {
  let app: TestApi;
  let seq = 0;
  beforeAll(async () => {
    // The bulk budget (10 a minute per organization by default) has its own file: rcs-bulk.test.ts.
    app = await startTelephonyApi({ RCS_BULK_CHECKS_PER_MIN: '1000' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const bad = (message: string | string[]) => ({ statusCode: 400, error: 'Bad Request', message });
  const notFound = { statusCode: 404, error: 'Not Found', message: 'RCS agent not found' };
  const register = (body: unknown, token = ALL, path = ACME) => app.request('POST', path, { token, body });
  /** A freshly registered agent of Acme, moved to `status` through PATCH when given. */
  const agent = async (status?: string, extra: Record<string, unknown> = {}) => {
    const res = await register({ senderId: `sender-${++seq}-${Date.now()}`, displayName: `Acme ${seq}`, ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    if (status !== undefined) {
      const p = await app.request('PATCH', `${ACME}/${res.body.id}`, { token: ALL, body: { status } });
      expect(p.status).toBe(200);
      return p.body;
    }
    return res.body;
  };

  describe('POST /rcs-agents', () => {
    it('registers a sender as pending (201) with the fields given, reserved empty, createdBy from the credential', async () => {
      const res = await register({
        senderId: 'acme-brand-1', displayName: 'Acme Support', description: 'Support line', logoUrl: 'https://cdn.acme.test/logo.png',
        bannerUrl: 'https://cdn.acme.test/banner.png', regions: ['us', 'north-america'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^rcs_/), orgId: 'org_acme', senderId: 'acme-brand-1', displayName: 'Acme Support', description: 'Support line',
        logoUrl: 'https://cdn.acme.test/logo.png', bannerUrl: 'https://cdn.acme.test/banner.png', status: 'pending', reserved: [],
        regions: ['us', 'north-america'], createdBy: 'usr_ann', createdByEmail: 'ann@acme.test', createdAt: expect.any(Number),
      });
      const minimal = await register({ senderId: 'acme-brand-2', displayName: 'Acme Two' });
      expect(minimal.body).toMatchObject({ status: 'pending', regions: [], reserved: [] });
      expect(minimal.body.linkedAgentId).toBeUndefined();
      const audit = await app.store.sql.query<{ action: string }>('select action from audit_log where target_id = $1', [res.body.id]);
      expect(audit.map((a) => a.action)).toEqual(['telephony.rcs_agent.registered']);
    });

    it('refuses a body without sender id or display name, or with bad fields: field validation', async () => {
      const cases: [unknown, string][] = [
        [{ displayName: 'x' }, 'senderId is required'],
        [{ senderId: '', displayName: 'x' }, 'senderId must be a non-empty string of at most 128 characters'],
        [{ senderId: 'ok-1' }, 'displayName is required'],
        [{ senderId: 'ok-1', displayName: 'x', logoUrl: 'not a url' }, 'logoUrl must be an absolute URL of at most 2048 characters'],
        [{ senderId: 'ok-1', displayName: 'x', regions: 'us' }, 'regions must be an array of strings'],
        [{ senderId: 'ok-1', displayName: 'x', status: 'live' }, 'status is not a known field'],
      ];
      for (const [body, rule] of cases) {
        const res = await register(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body, JSON.stringify(body)).toEqual(bad([rule]));
      }
      expect((await app.request('GET', `${ACME}?limit=200`, { token: ALL })).body.agents.map((a: { senderId: string }) => a.senderId)).not.toContain('ok-1');
    });

    it('a sender id is unique across organizations, enforced by the database: of two racing registrations one wins', async () => {
      await agent(undefined, { senderId: 'shared-sender' });
      for (const [token, path] of [[ALL, ACME], [GUS, GLOBEX]] as const) {
        const res = await register({ senderId: 'shared-sender', displayName: 'again' }, token, path);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(bad('Sender ID shared-sender is already registered'));
      }
      for (let i = 0; i < 5; i++) {
        const senderId = `race-${i}`;
        const [a, b] = await Promise.all([register({ senderId, displayName: 'a' }, ALL, ACME), register({ senderId, displayName: 'b' }, GUS, GLOBEX)]);
        expect([a.status, b.status].sort(), senderId).toEqual([201, 400]);
        const rows = await app.store.sql.query('select org_id from telephony_rcs_agents where sender_id = $1', [senderId]);
        expect(rows).toHaveLength(1);
      }
      // The constraint itself, not a check before the insert.
      await expect(app.store.sql.query(
        `insert into telephony_rcs_agents (id, org_id, sender_id, display_name, status, regions, created_by, created_at) values ('rcs_direct', 'org_globex', 'shared-sender', 'x', 'pending', '[]', 'usr_gus', 1)`,
      )).rejects.toThrow();
    });
  });

  describe('GET /rcs-agents', () => {
    it('filters by status; count is the total matching; limit (default 50) and offset page, oldest first', async () => {
      const live = [await agent('live'), await agent('live'), await agent('live')];
      const res = (await app.request('GET', `${ACME}?status=live`, { token: ALL })).body;
      expect(res.count).toBeGreaterThanOrEqual(3);
      expect(res.agents.every((a: { status: string }) => a.status === 'live')).toBe(true);
      expect(res.agents.map((a: { id: string }) => a.id)).toEqual(expect.arrayContaining(live.map((a) => a.id)));
      const page = (await app.request('GET', `${ACME}?status=live&limit=1&offset=1`, { token: ALL })).body;
      expect(page.count).toBe(res.count);
      expect(page.agents.map((a: { id: string }) => a.id)).toEqual([res.agents[1].id]);
      expect((await app.request('GET', `${ACME}?status=nothing-has-this`, { token: ALL })).body).toEqual({ agents: [], count: 0 });
      for (let i = 0; i < 50; i++) await agent();
      const all = (await app.request('GET', ACME, { token: ALL })).body;
      expect(all.agents).toHaveLength(50);
      expect(all.count).toBeGreaterThan(50);
      const created = all.agents.map((a: { createdAt: number }) => a.createdAt);
      expect([...created].sort((x, y) => x - y)).toEqual(created);
      expect((await app.request('GET', GLOBEX, { token: GUS })).body.agents.every((a: { orgId: string }) => a.orgId === 'org_globex')).toBe(true);
      for (const q of ['limit=0', 'limit=201', 'offset=-1', 'limit=x']) {
        const r = await app.request('GET', `${ACME}?${q}`, { token: ALL });
        expect(r.status, q).toBe(400);
        expect(Array.isArray(r.body.message), q).toBe(true);
      }
    });
  });

  describe('one RCS agent', () => {
    it('GET: 200 the agent; 404 RCS agent not found when unknown or another organization\'s', async () => {
      const a = await agent();
      const res = await app.request('GET', `${ACME}/${a.id}`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(a);
      const theirs = (await register({ senderId: `globex-${Date.now()}`, displayName: 'G' }, GUS, GLOBEX)).body;
      for (const id of ['rcs_unknown', theirs.id, 'bad%20id']) {
        const r = await app.request('GET', `${ACME}/${id}`, { token: ALL });
        expect(r.status, id).toBe(404);
        expect(r.body).toEqual(notFound);
      }
    });

    it('PATCH: stores the fields given, any status value unchecked; 404 when unknown', async () => {
      const a = await agent();
      const res = await app.request('PATCH', `${ACME}/${a.id}`, {
        token: ALL,
        body: { displayName: 'Renamed', description: 'New', logoUrl: 'https://x.test/l.png', bannerUrl: 'https://x.test/b.png', webhookUrl: 'https://hooks.acme.test/rcs', regions: ['eu'], status: 'live' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...a, displayName: 'Renamed', description: 'New', logoUrl: 'https://x.test/l.png', bannerUrl: 'https://x.test/b.png',
        webhookUrl: 'https://hooks.acme.test/rcs', regions: ['eu'], status: 'live',
      });
      // Neither the value nor the transition is validated.
      for (const status of ['pending', 'whatever-the-caller-says', 'testing']) {
        const r = await app.request('PATCH', `${ACME}/${a.id}`, { token: ALL, body: { status } });
        expect(r.status).toBe(200);
        expect(r.body.status).toBe(status);
      }
      expect((await app.request('PATCH', `${ACME}/${a.id}`, { token: ALL, body: {} })).body.status).toBe('testing');
      expect((await app.request('PATCH', `${ACME}/rcs_unknown`, { token: ALL, body: { status: 'live' } })).body).toEqual(notFound);
      const badField = await app.request('PATCH', `${ACME}/${a.id}`, { token: ALL, body: { senderId: 'other' } });
      expect(badField.body).toEqual(bad(['senderId is not a known field']));
    });

    it('DELETE suspends (200 {success: true}); a suspended agent is readable but refused by PATCH, link and capability checks', async () => {
      const a = await agent('live');
      const del = await app.request('DELETE', `${ACME}/${a.id}`, { token: ALL });
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ success: true });
      expect((await app.request('GET', `${ACME}/${a.id}`, { token: ALL })).body.status).toBe('suspended');
      for (const [method, path, body] of [
        ['PATCH', `${ACME}/${a.id}`, { status: 'live' }],
        ['POST', `${ACME}/${a.id}/link`, { luaAgentId: 'agt_support' }],
        ['POST', `${ACME}/${a.id}/capability-check`, { phoneNumber: '+14155550122' }],
        ['POST', `${ACME}/${a.id}/bulk-capability-check`, { phoneNumbers: usNumbers(500) }],
      ] as const) {
        const res = await app.request(method, path, { token: ALL, body });
        expect(res.status, path).toBe(404);
        expect(res.body, path).toEqual(notFound);
      }
      expect((await app.request('GET', `${ACME}/${a.id}`, { token: ALL })).body.status).toBe('suspended');
      // Suspending again is still a suspension; an unknown agent is not found.
      expect((await app.request('DELETE', `${ACME}/${a.id}`, { token: ALL })).status).toBe(200);
      expect((await app.request('DELETE', `${ACME}/rcs_unknown`, { token: ALL })).body).toEqual(notFound);
      // A sender PATCHed to `suspended` is just as suspended.
      const b = await agent('suspended');
      expect((await app.request('PATCH', `${ACME}/${b.id}`, { token: ALL, body: { status: 'live' } })).body).toEqual(notFound);
      const actions = (await app.store.sql.query<{ action: string }>('select action from audit_log where target_id = $1 order by at, id', [a.id])).map((x) => x.action);
      expect(actions).toEqual(['telephony.rcs_agent.registered', 'telephony.rcs_agent.updated', 'telephony.rcs_agent.suspended', 'telephony.rcs_agent.suspended']);
    });

    it('link records luaAgentId as linkedAgentId (201); unlink removes it (200); a foreign agent is 403', async () => {
      const a = await agent();
      const link = await app.request('POST', `${ACME}/${a.id}/link`, { token: ALL, body: { luaAgentId: 'agt_support' } });
      expect(link.status).toBe(201);
      expect(link.body).toEqual({ ...a, linkedAgentId: 'agt_support' });
      expect((await app.request('GET', `${ACME}/${a.id}`, { token: ALL })).body.linkedAgentId).toBe('agt_support');
      for (const luaAgentId of ['agt_globex', 'agt_nowhere']) {
        const r = await app.request('POST', `${ACME}/${a.id}/link`, { token: ALL, body: { luaAgentId } });
        expect(r.status).toBe(403);
        expect(r.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Agent does not belong to this organization' });
      }
      expect((await app.request('POST', `${ACME}/${a.id}/link`, { token: ALL, body: {} })).body).toEqual(bad(['luaAgentId is required']));
      expect((await app.request('POST', `${ACME}/${a.id}/link`, { token: ALL, body: { luaAgentId: '' } })).body).toEqual(bad(['luaAgentId must be a non-empty string (the platform agent id)']));
      expect((await app.request('POST', `${ACME}/rcs_unknown/link`, { token: ALL, body: { luaAgentId: 'agt_support' } })).body).toEqual(notFound);
      const unlink = await app.request('DELETE', `${ACME}/${a.id}/link`, { token: ALL });
      expect(unlink.status).toBe(200);
      expect(unlink.body).toEqual(a);
      expect((await app.request('DELETE', `${ACME}/rcs_unknown/link`, { token: ALL })).body).toEqual(notFound);
    });
  });

  describe('capability checks', () => {
    it('capability-check answers reachability (201) for a testing or live agent: even last digit reachable, with features', async () => {
      for (const status of ['testing', 'live']) {
        const a = await agent(status);
        const yes = await app.request('POST', `${ACME}/${a.id}/capability-check`, { token: ALL, body: { phoneNumber: '+14155550122' } });
        expect(yes.status).toBe(201);
        expect(yes.body).toEqual({ phoneNumber: '+14155550122', isReachable: true, features: expect.arrayContaining([expect.any(String)]) });
        expect(yes.body.features.length).toBeGreaterThan(0);
        const no = await app.request('POST', `${ACME}/${a.id}/capability-check`, { token: ALL, body: { phoneNumber: '+14155550123' } });
        expect(no.body).toEqual({ phoneNumber: '+14155550123', isReachable: false });
      }
    });

    it('capability-check: RCS agent must be testing or live; the number must be E.164', async () => {
      for (const status of [undefined, 'something-else']) {
        const a = await agent(status);
        const res = await app.request('POST', `${ACME}/${a.id}/capability-check`, { token: ALL, body: { phoneNumber: '+14155550122' } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(bad('RCS agent must be testing or live'));
      }
      const live = await agent('live');
      expect((await app.request('POST', `${ACME}/${live.id}/capability-check`, { token: ALL, body: {} })).body).toEqual(bad(['phoneNumber is required']));
      for (const body of [{ phoneNumber: '14155550122' }, { phoneNumber: '+0123' }, { phoneNumber: '+1' }, { phoneNumber: 14155550122 }]) {
        const res = await app.request('POST', `${ACME}/${live.id}/capability-check`, { token: ALL, body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body, JSON.stringify(body)).toEqual(bad(['phoneNumber must be an E.164 phone number (+ and digits)']));
      }
      // Digits in E.164's form that no numbering plan allows (libphonenumber-js).
      const impossible = await app.request('POST', `${ACME}/${live.id}/capability-check`, { token: ALL, body: { phoneNumber: '+1415' } });
      expect(impossible.body).toEqual(bad(['phoneNumber must be an E.164 phone number (+ and digits)']));
    });

    it('bulk-capability-check answers the reachable users and the sample\'s statistics (201)', async () => {
      const a = await agent('live');
      // 1,000 numbers +14155550000..+14155550999: the sample is the 100 whose tens digit is 0, half of them even.
      const list = usNumbers(1000);
      const res = await app.request('POST', `${ACME}/${a.id}/bulk-capability-check`, { token: ALL, body: { phoneNumbers: list } });
      expect(res.status).toBe(201);
      expect(res.body.reachableUsers).toEqual(list.filter((n) => Number(n.at(-1)) % 2 === 0));
      expect(res.body).toMatchObject({ totalRandomSampleUserCount: 100, reachableRandomSampleUserCount: 50, estimatedReachabilityPercent: 50 });
    });

    it('bulk: the percentage is rounded to two decimals, and 0 on an empty sample', async () => {
      const a = await agent('live');
      // 500 numbers none of which has a tens digit of 0 ...
      const noSample = usNumbers(900, 1000).filter((n) => n.at(-2) !== '0').slice(0, 497);
      const run = async (list: string[]) => (await app.request('POST', `${ACME}/${a.id}/bulk-capability-check`, { token: ALL, body: { phoneNumbers: list } })).body;
      // ... plus three sampled, of which one (…00) is reachable: 33.33; two (…00, …02): 66.67.
      expect(await run([...noSample, '+14155552100', '+14155552101', '+14155552103'])).toMatchObject({
        totalRandomSampleUserCount: 3, reachableRandomSampleUserCount: 1, estimatedReachabilityPercent: 33.33,
      });
      expect(await run([...noSample, '+14155552100', '+14155552102', '+14155552103'])).toMatchObject({
        totalRandomSampleUserCount: 3, reachableRandomSampleUserCount: 2, estimatedReachabilityPercent: 66.67,
      });
      const empty = await run([...noSample, '+14155552111', '+14155552112', '+14155552113']);
      expect(empty).toMatchObject({ totalRandomSampleUserCount: 0, reachableRandomSampleUserCount: 0, estimatedReachabilityPercent: 0 });
      expect(empty.reachableUsers.length).toBeGreaterThan(0);
    });

    it('bulk: the agent must be live, checked before the list; 500 to 10,000 distinct E.164 numbers', async () => {
      for (const status of [undefined, 'testing']) {
        const a = await agent(status);
        // Even a list that breaks every rule gets the status answer first.
        const res = await app.request('POST', `${ACME}/${a.id}/bulk-capability-check`, { token: ALL, body: { phoneNumbers: ['x', 'x'] } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(bad('RCS agent must be live'));
      }
      const live = await agent('live');
      const check = (body: unknown) => app.request('POST', `${ACME}/${live.id}/bulk-capability-check`, { token: ALL, body });
      const size = 'phoneNumbers must contain 500 to 10,000 numbers';
      expect((await check({ phoneNumbers: usNumbers(499) })).body).toEqual(bad([size]));
      expect((await check({ phoneNumbers: [...usNumbers(10_000), '+14155560000'] })).body).toEqual(bad([size]));
      expect((await check({ phoneNumbers: [] })).body).toEqual(bad([size]));
      const dup = usNumbers(500);
      dup[499] = dup[3]!;
      expect((await check({ phoneNumbers: dup })).body).toEqual(bad(['phoneNumbers must not contain duplicates (phoneNumbers.499 is given before)']));
      const notE164 = usNumbers(500);
      notE164[7] = '14155550007';
      expect((await check({ phoneNumbers: notE164 })).body).toEqual(bad(['phoneNumbers.7 must be an E.164 phone number (+ and digits)']));
      for (const body of [{}, { phoneNumbers: 'x' }, [], { phoneNumbers: { a: 1 } }]) {
        const res = await check(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.message, JSON.stringify(body)).toEqual(['phoneNumbers must be an array of E.164 phone numbers']);
      }
      const edges = [await check({ phoneNumbers: usNumbers(500) }), await check({ phoneNumbers: usNumbers(10_000) })];
      expect(edges.map((r) => r.status)).toEqual([201, 201]);
      expect(edges[1]!.body.totalRandomSampleUserCount).toBe(1000);
    });
  });
  describe('scopes (spec 02 part 5; contract telephony T2)', () => {
    const KEYS: Record<string, readonly string[]> = {
      lk_tel_read: ['telephony:read'], lk_tel_write: ['telephony:write'], lk_tel_manage: ['telephony:manage'],
      lk_tel_provision: ['telephony:provision'], lk_tel_wild: ['telephony:read', 'telephony:write', 'telephony:manage'], lk_tel_none: [],
      sess_ann: ['telephony:read', 'telephony:write', 'telephony:manage'], sess_mo: ['telephony:read', 'telephony:write', 'telephony:manage'],
    };
    const routes = (id: string): { method: string; path: string; scope: string; body?: unknown }[] => [
      { method: 'POST', path: ACME, scope: 'telephony:write', body: { senderId: '', displayName: 'x' } },
      { method: 'GET', path: ACME, scope: 'telephony:read' },
      { method: 'GET', path: `${ACME}/${id}`, scope: 'telephony:read' },
      { method: 'PATCH', path: `${ACME}/rcs_unknown`, scope: 'telephony:write', body: { status: 'live' } },
      { method: 'DELETE', path: `${ACME}/rcs_unknown`, scope: 'telephony:manage' },
      { method: 'POST', path: `${ACME}/rcs_unknown/link`, scope: 'telephony:write', body: { luaAgentId: 'agt_support' } },
      { method: 'DELETE', path: `${ACME}/rcs_unknown/link`, scope: 'telephony:manage' },
      { method: 'POST', path: `${ACME}/${id}/capability-check`, scope: 'telephony:write', body: { phoneNumber: '+14155550122' } },
      { method: 'POST', path: `${ACME}/${id}/bulk-capability-check`, scope: 'telephony:write', body: { phoneNumbers: [] } },
    ];

    it('grants each route to its scope only: 403 Insufficient permissions for this organization otherwise; nothing changes', async () => {
      const a = await agent('live');
      const before = await app.store.sql.query('select * from telephony_rcs_agents order by id');
      for (const r of routes(a.id)) {
        for (const [key, held] of Object.entries(KEYS)) {
          const res = await app.request(r.method, r.path, { token: key, ...(r.body !== undefined ? { body: r.body } : {}) });
          const what = `${key} ${r.method} ${r.path}`;
          if (held.includes(r.scope)) {
            expect(res.status, what).not.toBe(403);
            expect(res.status, what).toBeLessThan(500);
          } else {
            expect(res.status, what).toBe(403);
            expect(res.body, what).toEqual({
              statusCode: 403, error: 'Forbidden', code: 'INSUFFICIENT_SCOPE', message: 'Insufficient permissions for this organization',
              requiredScope: r.scope, resourceType: 'organization', resourceId: 'org_acme',
            });
          }
        }
      }
      expect(await app.store.sql.query('select * from telephony_rcs_agents order by id')).toEqual(before);
    });

    it('another organization\'s path: 403 RESOURCE_NOT_PROJECTED on every route, nothing read or changed', async () => {
      const a = await agent('live');
      const before = await app.store.sql.query('select * from telephony_rcs_agents order by id');
      const extra = [
        { method: 'DELETE', path: `${ACME}/${a.id}` },
        { method: 'PATCH', path: `${ACME}/${a.id}`, body: { status: 'pending' } },
        { method: 'POST', path: ACME, body: { senderId: 'globex-into-acme', displayName: 'x' } },
      ];
      for (const r of [...routes(a.id), ...extra]) {
        const res = await app.request(r.method, r.path, { token: GUS, ...(r.body !== undefined ? { body: r.body } : {}) });
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        expect(res.body, `${r.method} ${r.path}`).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'organization', resourceId: 'org_acme' });
      }
      expect(await app.store.sql.query('select * from telephony_rcs_agents order by id')).toEqual(before);
      expect((await app.request('GET', ACME, { token: 'lk_nope' })).status).toBe(401);
    });
  });
});
