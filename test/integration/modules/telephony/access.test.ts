/**
 * Scopes of spec 02 part 5 (contract telephony T2) on every trunk and number route: each of
 * telephony:read, :write, :manage, :provision and telephony:* against each route; and another
 * organization's path, which never reads or changes anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startTelephonyApi } from '../../../helpers/telephony.js';

const ORG = '/developer/orgs/org_acme';

type Scope = 'telephony:read' | 'telephony:write' | 'telephony:manage' | 'telephony:provision';
const KEYS: Record<string, readonly Scope[]> = {
  lk_tel_read: ['telephony:read'],
  lk_tel_write: ['telephony:write'],
  lk_tel_manage: ['telephony:manage'],
  lk_tel_provision: ['telephony:provision'],
  // The wildcard covers read, write and manage, never the sensitive provision scope.
  lk_tel_wild: ['telephony:read', 'telephony:write', 'telephony:manage'],
  lk_tel_none: [],
};

describe('telephony scopes and organizations', () => {
  let app: TestApi;
  let trunkId: string;
  beforeAll(async () => {
    app = await startTelephonyApi();
    const t = await app.request('POST', `${ORG}/sip-trunks`, { token: 'lk_tel_all', body: { acl: ['192.0.2.0/24', '198.51.100.0/24'], enableDigestAuth: true } });
    trunkId = t.body.id;
    await app.request('POST', `${ORG}/sip-trunks/${trunkId}/credentials`, { token: 'lk_tel_all', body: { username: 'matrix-user' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** Every organization route with its scope; bodies that pass validation, ids that may not exist. */
  const routes = (): { method: string; path: string; scope: Scope; body?: unknown }[] => [
    { method: 'POST', path: `${ORG}/sip-trunks`, scope: 'telephony:write', body: {} },
    { method: 'GET', path: `${ORG}/sip-trunks`, scope: 'telephony:read' },
    { method: 'GET', path: `${ORG}/sip-trunks/${trunkId}`, scope: 'telephony:read' },
    { method: 'DELETE', path: `${ORG}/sip-trunks/trk_unknown`, scope: 'telephony:manage' },
    { method: 'POST', path: `${ORG}/sip-trunks/trk_unknown/acl`, scope: 'telephony:write', body: { ip: '10.0.0.0/8' } },
    { method: 'DELETE', path: `${ORG}/sip-trunks/trk_unknown/acl/10.0.0.0%2F8`, scope: 'telephony:manage' },
    { method: 'POST', path: `${ORG}/sip-trunks/trk_unknown/credentials`, scope: 'telephony:write', body: { username: 'someone' } },
    { method: 'GET', path: `${ORG}/sip-trunks/${trunkId}/credentials`, scope: 'telephony:read' },
    { method: 'DELETE', path: `${ORG}/sip-trunks/trk_unknown/credentials/someone`, scope: 'telephony:manage' },
    { method: 'POST', path: `${ORG}/sip-trunks/trk_unknown/credentials/someone/rotate`, scope: 'telephony:write' },
    { method: 'DELETE', path: `${ORG}/sip-trunks/trk_unknown/agent`, scope: 'telephony:manage' },
    { method: 'POST', path: `${ORG}/phone-numbers`, scope: 'telephony:provision', body: { msisdn: '15550300000' } },
    { method: 'GET', path: `${ORG}/phone-numbers`, scope: 'telephony:read' },
    { method: 'GET', path: `${ORG}/phone-numbers/14155550123`, scope: 'telephony:read' },
    { method: 'DELETE', path: `${ORG}/phone-numbers/15550100999`, scope: 'telephony:manage' },
    { method: 'POST', path: `${ORG}/phone-numbers/15550100999/suspend`, scope: 'telephony:write' },
    { method: 'POST', path: `${ORG}/phone-numbers/15550100999/reactivate`, scope: 'telephony:write' },
    { method: 'POST', path: `${ORG}/phone-numbers/15550100999/configure-voice`, scope: 'telephony:write' },
  ];

  it('grants each route to its scope only: 403 Insufficient permissions for this organization otherwise', async () => {
    for (const r of routes()) {
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
  });

  it('a refused request changes nothing', async () => {
    const before = await app.request('GET', `${ORG}/sip-trunks/${trunkId}`, { token: 'lk_tel_all' });
    expect((await app.request('DELETE', `${ORG}/sip-trunks/${trunkId}`, { token: 'lk_tel_read' })).status).toBe(403);
    expect((await app.request('DELETE', `${ORG}/sip-trunks/${trunkId}/credentials/matrix-user`, { token: 'lk_tel_wild' })).status).toBe(200);
    expect((await app.request('POST', `${ORG}/sip-trunks/${trunkId}/acl`, { token: 'lk_tel_manage', body: { ip: '10.1.0.0/16' } })).status).toBe(403);
    expect((await app.request('POST', `${ORG}/phone-numbers`, { token: 'lk_tel_wild', body: { msisdn: '15550100500' } })).status).toBe(403);
    const after = await app.request('GET', `${ORG}/sip-trunks/${trunkId}`, { token: 'lk_tel_all' });
    expect(after.body).toEqual({ ...before.body, digestUsers: [] });
    expect((await app.request('GET', `${ORG}/phone-numbers/15550100500`, { token: 'lk_tel_all' })).status).toBe(404);
  });

  it('purchase needs telephony:provision by exact name; a person holds it as admin, not as member', async () => {
    expect((await app.request('POST', `${ORG}/phone-numbers`, { token: 'lk_tel_provision', body: { msisdn: '15550100501' } })).status).toBe(201);
    expect((await app.request('POST', `${ORG}/phone-numbers`, { token: 'sess_ann', body: { msisdn: '15550100502' } })).status).toBe(201);
    expect((await app.request('POST', `${ORG}/phone-numbers`, { token: 'lk_tel_legacy', body: { msisdn: '15550100503' } })).status).toBe(201);
    const member = await app.request('POST', `${ORG}/phone-numbers`, { token: 'sess_mo', body: { msisdn: '15550100504' } });
    expect(member.status).toBe(403);
    expect(member.body.requiredScope).toBe('telephony:provision');
    expect((await app.request('GET', `${ORG}/phone-numbers`, { token: 'sess_mo' })).status).toBe(200);
  });

  it('trunk linking: telephony:read on the organization, then the agent\'s organization, then telephony:write on the agent', async () => {
    const link = (token: string, agentId = 'agt_support', id = trunkId) => app.request('POST', `${ORG}/sip-trunks/${id}/agents/${agentId}`, { token });
    for (const token of ['lk_tel_write', 'lk_tel_manage', 'lk_tel_provision', 'lk_tel_none']) {
      const res = await link(token);
      expect(res.status, token).toBe(403);
      expect(res.body, token).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'telephony:read', resourceType: 'organization', message: 'Insufficient permissions for this organization' });
    }
    // Read only: the agent check comes before the write scope on it.
    expect((await link('lk_tel_read', 'agt_globex')).body.message).toBe('Agent does not belong to this organization');
    const noWrite = await link('lk_tel_read');
    expect(noWrite.status).toBe(403);
    expect(noWrite.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'telephony:write', resourceType: 'agent', resourceId: 'agt_support', message: 'Insufficient permissions for this organization' });
    // A private agent the key has no grant for is not visible to it.
    expect((await link('lk_tel_read_write', 'agt_sales')).body.code).toBe('RESOURCE_NOT_PROJECTED');
    expect((await link('lk_tel_read_write', 'agt_support', 'trk_unknown')).status).toBe(404);
    expect((await link('lk_tel_read_write')).status).toBe(201);
    expect((await link('lk_tel_wild')).status).toBe(201);
  });

  it('the inventory search needs only an authenticated key', async () => {
    for (const token of [...Object.keys(KEYS), 'lk_globex_tel', 'sess_mo']) {
      expect((await app.request('GET', '/developer/phone-numbers/available?country=US', { token })).status, token).toBe(200);
    }
    expect((await app.request('GET', '/developer/phone-numbers/available?country=US', { token: 'lk_nope' })).status).toBe(401);
  });

  it('another organization\'s path: 403 RESOURCE_NOT_PROJECTED on every route, nothing read or changed', async () => {
    const snapshot = async () => ({
      trunks: await app.store.sql.query('select * from telephony_sip_trunks order by id'),
      acl: await app.store.sql.query('select trunk_id, ip from telephony_trunk_acl order by trunk_id, ip'),
      users: await app.store.sql.query('select trunk_id, username, ha1_md5 from telephony_trunk_digest_users order by trunk_id, username'),
      numbers: await app.store.sql.query('select id, org_id, status from telephony_phone_numbers order by id'),
    });
    const before = await snapshot();
    const extra = [
      { method: 'POST', path: `${ORG}/sip-trunks/${trunkId}/agents/agt_globex` },
      { method: 'DELETE', path: `${ORG}/sip-trunks/${trunkId}` },
      { method: 'POST', path: `${ORG}/sip-trunks`, body: { acl: ['10.0.0.0/8'] } },
      { method: 'POST', path: `${ORG}/phone-numbers`, body: { msisdn: '15550100600' } },
      { method: 'DELETE', path: `${ORG}/phone-numbers/15550100501` },
    ];
    for (const r of [...routes(), ...extra]) {
      const res = await app.request(r.method, r.path, { token: 'lk_globex_tel', ...(r.body !== undefined ? { body: r.body } : {}) });
      expect(res.status, `${r.method} ${r.path}`).toBe(403);
      expect(res.body, `${r.method} ${r.path}`).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'organization', resourceId: 'org_acme' });
    }
    expect(await snapshot()).toEqual(before);
  });

  it('a trunk or number of another organization is not found through one\'s own path', async () => {
    const G = '/developer/orgs/org_globex';
    const theirs = (await app.request('POST', `${G}/sip-trunks`, { token: 'lk_globex_tel', body: { acl: ['10.0.0.0/8'] } })).body;
    for (const [method, path] of [
      ['GET', `${ORG}/sip-trunks/${theirs.id}`], ['DELETE', `${ORG}/sip-trunks/${theirs.id}`], ['GET', `${ORG}/sip-trunks/${theirs.id}/credentials`],
      ['POST', `${ORG}/sip-trunks/${theirs.id}/agents/agt_support`],
    ] as const) {
      const res = await app.request(method, path, { token: 'lk_tel_all' });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.message).toBe('SIP trunk not found');
    }
    expect((await app.request('GET', `${ORG}/sip-trunks`, { token: 'lk_tel_all' })).body.trunks.map((t: { id: string }) => t.id)).not.toContain(theirs.id);
    // Globex's seeded number, through Acme's path.
    for (const [method, path, message] of [
      ['GET', `${ORG}/phone-numbers/15550100000`, 'Phone number not found'],
      ['DELETE', `${ORG}/phone-numbers/15550100000`, 'Phone number not found or already released'],
      ['POST', `${ORG}/phone-numbers/15550100000/suspend`, 'Phone number not found or not active'],
    ] as const) {
      const res = await app.request(method, path, { token: 'lk_tel_all' });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe(message);
    }
    expect((await app.request('GET', `${G}/sip-trunks/${theirs.id}`, { token: 'lk_globex_tel' })).body.status).toBe('active');
    expect((await app.request('GET', `${G}/phone-numbers/15550100000`, { token: 'lk_globex_tel' })).body.status).toBe('active');
  });
});
