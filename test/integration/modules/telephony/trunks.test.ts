/** SIP trunks (spec 02 parts 2.1, 3, 4.1, 7, 8) through HTTP against the started service. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startTelephonyApi } from '../../../helpers/telephony.js';

const BASE = '/developer/orgs/org_acme/sip-trunks';
const ALL = 'lk_tel_all';

describe('SIP trunk routes', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startTelephonyApi();
  });
  afterAll(async () => {
    await app?.stop();
  });

  const create = (body: unknown, token = ALL) => app.request('POST', BASE, { token, body });
  const trunk = async (body: Record<string, unknown> = { acl: ['203.0.113.0/24'] }) => {
    const res = await create(body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; domain: string; acl: { ip: string }[]; sipEndpoint: string };
  };
  const rows = (sql: string, params: unknown[] = []) => app.store.sql.query<Record<string, unknown>>(sql, params);

  describe('POST /sip-trunks', () => {
    it('creates an active trunk with the defaults and the read form of part 2.1', async () => {
      const res = await create({ acl: ['203.0.113.0/24', '2001:db8::/32'] });
      expect(res.status).toBe(201);
      const t = res.body;
      expect(t).toMatchObject({
        region: 'us', status: 'active', tls: 'optional', srtp: 'optional', digestAuthEnabled: false, digestUsers: [],
        createdBy: 'usr_ann', createdByEmail: 'ann@acme.test',
      });
      expect(t.id).toMatch(/^trk_/);
      expect(t.defaultAgentId).toBeUndefined();
      expect(t.acl.map((a: { ip: string }) => a.ip)).toEqual(['203.0.113.0/24', '2001:db8::/32']);
      expect(typeof t.acl[0].createdAt).toBe('number');
      expect(typeof t.createdAt).toBe('number');
      expect(Math.abs(t.createdAt - Date.now())).toBeLessThan(60_000);
      const host = `${t.domain}.sip-us.sip.carrier-a.test`;
      expect(t.sipEndpoint).toBe(`sip:*@${host}`);
      expect(t.connectionDetails).toEqual({ sipUri: `sip:{agent-id}@${host}`, region: 'us', transport: ['UDP', 'TCP', 'TLS'], port: 5060 });
    });

    it('gives TLS only on 5061 when tls is always, and keeps region, srtp and digest auth', async () => {
      const t = (await create({ region: 'eu', tls: 'always', srtp: 'always', enableDigestAuth: true })).body;
      expect(t).toMatchObject({ region: 'eu', tls: 'always', srtp: 'always', digestAuthEnabled: true, acl: [], status: 'active' });
      expect(t.sipEndpoint).toBe(`sip:*@${t.domain}.sip-eu.sip.carrier-a.test`);
      expect(t.connectionDetails).toEqual({ sipUri: `sip:{agent-id}@${t.domain}.sip-eu.sip.carrier-a.test`, region: 'eu', transport: ['TLS'], port: 5061 });
      for (const tls of ['optional', 'never']) {
        const other = (await create({ tls, enableDigestAuth: true })).body;
        expect(other.connectionDetails).toMatchObject({ transport: ['UDP', 'TCP', 'TLS'], port: 5060 });
      }
    });

    it('answers 400 without ACL or digest auth, and keeps a failed trunk until it is deleted', async () => {
      const res = await create({ region: 'ap' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'At least one ACL entry or digest authentication is required for security' });
      const list = (await app.request('GET', BASE, { token: ALL })).body;
      const failed = list.trunks.filter((t: { status: string; region: string }) => t.status === 'failed' && t.region === 'ap');
      expect(failed).toHaveLength(1);
      expect((await app.request('GET', `${BASE}/${failed[0].id}`, { token: ALL })).body.status).toBe('failed');
      expect((await app.request('DELETE', `${BASE}/${failed[0].id}`, { token: ALL })).body).toEqual({ success: true });
      expect((await app.request('GET', `${BASE}/${failed[0].id}`, { token: ALL })).status).toBe(404);
    });

    it('refuses more than 16 ACL entries and changes nothing', async () => {
      const before = (await app.request('GET', BASE, { token: ALL })).body.count;
      const acl = Array.from({ length: 17 }, (_, i) => `198.51.100.${i}/32`);
      const res = await create({ acl });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Maximum 16 ACL entries allowed');
      expect((await app.request('GET', BASE, { token: ALL })).body.count).toBe(before);
    });

    it('leaves malformed CIDRs to the carrier: 422 VENDOR_REJECTED, nothing kept', async () => {
      const before = (await app.request('GET', BASE, { token: ALL })).body.count;
      for (const bad of ['10.0.0.0/33', 'not-an-ip', '1/8', '10.0.0.1/']) {
        const res = await create({ acl: [bad] });
        expect(res.status, bad).toBe(422);
        expect(res.body).toMatchObject({ statusCode: 422, code: 'VENDOR_REJECTED', vendor: 'carrier-a', vendorStatus: 400 });
      }
      expect((await app.request('GET', BASE, { token: ALL })).body.count).toBe(before);
    });

    it('refuses what real carriers refuse (422 VENDOR_REJECTED, nothing kept): open, too wide, zone ids, loopback, multicast, unspecified, link-local, metadata', async () => {
      const countBefore = (await app.request('GET', BASE, { token: ALL })).body.count;
      const rowsBefore = await rows('select count(*)::int as n from telephony_sip_trunks');
      const refused: [string, string][] = [
        ['0.0.0.0/0', 'ACL entry 0.0.0.0/0 refused: prefixes shorter than /8 are not accepted for IPv4'],
        ['::/0', 'ACL entry ::/0 refused: prefixes shorter than /32 are not accepted for IPv6'],
        ['203.0.113.9/7', 'ACL entry 202.0.0.0/7 refused: prefixes shorter than /8 are not accepted for IPv4'],
        ['2001:db8::/31', 'ACL entry 2001:db8::/31 refused: prefixes shorter than /32 are not accepted for IPv6'],
        ['fe80::1%eth0', 'Invalid CIDR: "fe80::1%eth0": zone ids are not accepted'],
        ['127.0.0.1', 'ACL entry 127.0.0.1/32 refused: it covers loopback addresses'],
        ['::1', 'ACL entry ::1/128 refused: it covers the loopback address'],
        ['::ffff:127.0.0.1', 'ACL entry 127.0.0.1/32 refused: it covers loopback addresses'],
        ['::ffff:0:0/95', 'ACL entry ::fffe:0:0/95 refused: it covers every IPv4 address'],
        ['224.0.0.5/32', 'ACL entry 224.0.0.5/32 refused: it covers multicast addresses'],
        ['ff02::1', 'ACL entry ff02::1/128 refused: it covers multicast addresses'],
        ['0.0.0.0', 'ACL entry 0.0.0.0/32 refused: it covers unspecified addresses'],
        ['::', 'ACL entry ::/128 refused: it covers the unspecified address'],
        ['169.254.10.0/24', 'ACL entry 169.254.10.0/24 refused: it covers link-local addresses'],
        ['fe80::/64', 'ACL entry fe80::/64 refused: it covers link-local addresses'],
        ['169.254.169.254', 'ACL entry 169.254.169.254/32 refused: it covers link-local addresses'],
        ['100.100.100.200/32', 'ACL entry 100.100.100.200/32 refused: it covers a cloud metadata address (100.100.100.200)'],
        ['100.0.0.0/8', 'ACL entry 100.0.0.0/8 refused: it covers a cloud metadata address (100.100.100.200)'],
        ['fd00:ec2::254', 'ACL entry fd00:ec2::254/128 refused: it covers a cloud metadata address (fd00:ec2::254)'],
        ['fd00:ec2::/32', 'ACL entry fd00:ec2::/32 refused: it covers a cloud metadata address (fd00:ec2::254)'],
      ];
      for (const [entry, message] of refused) {
        // Digest authentication off: the ACL alone would have opened the trunk.
        const res = await create({ acl: ['203.0.113.0/24', entry] });
        expect(res.status, entry).toBe(422);
        expect(res.body, entry).toEqual({ statusCode: 422, error: 'Unprocessable Entity', code: 'VENDOR_REJECTED', message, vendor: 'carrier-a', vendorStatus: 400 });
      }
      expect((await app.request('GET', BASE, { token: ALL })).body.count).toBe(countBefore);
      expect(await rows('select count(*)::int as n from telephony_sip_trunks')).toEqual(rowsBefore);
      // The same carrier check on ACL add.
      const t = await trunk();
      for (const [entry, message] of refused) {
        const res = await app.request('POST', `${BASE}/${t.id}/acl`, { token: ALL, body: { ip: entry } });
        expect(res.status, entry).toBe(422);
        expect(res.body.message, entry).toBe(message);
      }
      expect((await app.request('GET', `${BASE}/${t.id}`, { token: ALL })).body.acl.map((a: { ip: string }) => a.ip)).toEqual(['203.0.113.0/24']);
    });

    it('stores an entry in its canonical network form (host bits cleared, IPv4-mapped as IPv4): one network, one entry', async () => {
      const res = await create({ acl: ['10.1.2.3/8', '10.0.0.0/8', '::ffff:198.51.100.7/120', '2001:db8:0:0:1::/48'] });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.acl.map((a: { ip: string }) => a.ip)).toEqual(['10.0.0.0/8', '198.51.100.0/24', '2001:db8::/48']);
      const dup = await app.request('POST', `${BASE}/${res.body.id}/acl`, { token: ALL, body: { ip: '198.51.100.200/24' } });
      expect(dup.status).toBe(400);
      expect(dup.body.message).toBe('IP already in ACL');
      const added = await app.request('POST', `${BASE}/${res.body.id}/acl`, { token: ALL, body: { ip: '172.16.99.1/12' } });
      expect(added.body.acl.map((a: { ip: string }) => a.ip)).toContain('172.16.0.0/12');
    });

    it('checks field types: the message is the array of failed rules', async () => {
      const res = await create({ region: 'mars', enableDigestAuth: 'yes', tls: 'sometimes' });
      expect(res.status).toBe(400);
      expect(res.body.statusCode).toBe(400);
      expect(res.body.error).toBe('Bad Request');
      expect(Array.isArray(res.body.message)).toBe(true);
      expect(res.body.message.length).toBeGreaterThanOrEqual(3);
      expect(Object.keys(res.body).sort()).toEqual(['error', 'message', 'statusCode']);
    });
  });

  describe('GET /sip-trunks and GET /sip-trunks/:trunkId', () => {
    it('lists failed trunks, never deleted ones, with count the page length', async () => {
      const kept = await trunk();
      const gone = await trunk();
      await create({});
      expect((await app.request('DELETE', `${BASE}/${gone.id}`, { token: ALL })).status).toBe(200);
      const res = await app.request('GET', BASE, { token: ALL });
      expect(res.status).toBe(200);
      const ids = res.body.trunks.map((t: { id: string }) => t.id);
      expect(ids).toContain(kept.id);
      expect(ids).not.toContain(gone.id);
      expect(res.body.trunks.some((t: { status: string }) => t.status === 'failed')).toBe(true);
      expect(res.body.trunks.some((t: { status: string }) => t.status === 'deleted')).toBe(false);
      expect(res.body.count).toBe(res.body.trunks.length);
    });

    it('reads one trunk; 404 SIP trunk not found for unknown, deleted and malformed ids', async () => {
      const t = await trunk();
      const res = await app.request('GET', `${BASE}/${t.id}`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: t.id, domain: t.domain });
      await app.request('DELETE', `${BASE}/${t.id}`, { token: ALL });
      for (const id of [t.id, 'trk_nope', 'a%20b']) {
        const r = await app.request('GET', `${BASE}/${id}`, { token: ALL });
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'SIP trunk not found' });
      }
    });
  });

  describe('DELETE /sip-trunks/:trunkId', () => {
    it('answers {success: true}; credentials and ACL go with the trunk; a second delete is 404', async () => {
      const t = await trunk({ acl: ['192.0.2.0/24'], enableDigestAuth: true });
      expect((await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: 'pbx-main' } })).status).toBe(201);
      const res = await app.request('DELETE', `${BASE}/${t.id}`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(await rows('select * from telephony_trunk_acl where trunk_id = $1', [t.id])).toEqual([]);
      expect(await rows('select * from telephony_trunk_digest_users where trunk_id = $1', [t.id])).toEqual([]);
      expect((await rows('select status from telephony_sip_trunks where id = $1', [t.id]))[0]!.status).toBe('deleted');
      expect((await app.request('DELETE', `${BASE}/${t.id}`, { token: ALL })).body.message).toBe('SIP trunk not found');
      expect((await app.request('GET', `${BASE}/${t.id}/credentials`, { token: ALL })).status).toBe(404);
    });
  });

  describe('ACL entries', () => {
    it('POST /acl adds an entry (201, the updated trunk), canonical, with its description', async () => {
      const t = await trunk();
      const res = await app.request('POST', `${BASE}/${t.id}/acl`, { token: ALL, body: { ip: '2001:0db8:0000::/48', description: 'office' } });
      expect(res.status).toBe(201);
      expect(res.body.id).toBe(t.id);
      expect(res.body.acl).toEqual([
        { ip: '203.0.113.0/24', createdAt: expect.any(Number) },
        { ip: '2001:db8::/48', description: 'office', createdAt: expect.any(Number) },
      ]);
    });

    it('refuses a duplicate (IP already in ACL) and a 17th entry (Maximum 16 ACL entries allowed)', async () => {
      const t = await trunk();
      const dup = await app.request('POST', `${BASE}/${t.id}/acl`, { token: ALL, body: { ip: '203.0.113.0/24' } });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'IP already in ACL' });
      for (let i = 1; i < 16; i++) {
        expect((await app.request('POST', `${BASE}/${t.id}/acl`, { token: ALL, body: { ip: `198.51.100.${i}` } })).status).toBe(201);
      }
      const full = await app.request('POST', `${BASE}/${t.id}/acl`, { token: ALL, body: { ip: '198.51.100.200/32' } });
      expect(full.status).toBe(400);
      expect(full.body.message).toBe('Maximum 16 ACL entries allowed');
      expect((await app.request('GET', `${BASE}/${t.id}`, { token: ALL })).body.acl).toHaveLength(16);
    });

    it('a malformed CIDR is the carrier\'s refusal; a missing ip is field validation; unknown trunk 404', async () => {
      const t = await trunk();
      const bad = await app.request('POST', `${BASE}/${t.id}/acl`, { token: ALL, body: { ip: '300.1.1.1/24' } });
      expect(bad.status).toBe(422);
      expect(bad.body.code).toBe('VENDOR_REJECTED');
      const missing = await app.request('POST', `${BASE}/${t.id}/acl`, { token: ALL, body: {} });
      expect(missing.status).toBe(400);
      expect(missing.body.message).toEqual(['ip is required']);
      const unknown = await app.request('POST', `${BASE}/trk_nope/acl`, { token: ALL, body: { ip: '192.0.2.1/32' } });
      expect(unknown.status).toBe(404);
      expect(unknown.body.message).toBe('SIP trunk not found');
      expect((await app.request('GET', `${BASE}/${t.id}`, { token: ALL })).body.acl).toHaveLength(1);
    });

    it('DELETE /acl/:ip takes the CIDR URL-encoded; never the last entry, even with digest auth', async () => {
      const t = await trunk({ acl: ['203.0.113.0/24', '192.0.2.7/32'], enableDigestAuth: true });
      const res = await app.request('DELETE', `${BASE}/${t.id}/acl/${encodeURIComponent('192.0.2.7/32')}`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body.acl.map((a: { ip: string }) => a.ip)).toEqual(['203.0.113.0/24']);
      const last = await app.request('DELETE', `${BASE}/${t.id}/acl/203.0.113.0%2F24`, { token: ALL });
      expect(last.status).toBe(400);
      expect(last.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Cannot remove last ACL entry. Add a replacement first.' });
      const unknown = await app.request('DELETE', `${BASE}/${t.id}/acl/${encodeURIComponent('10.9.9.0/24')}`, { token: ALL });
      expect(unknown.status).toBe(404);
      expect(unknown.body.message).toBe('IP not found in ACL');
      expect((await app.request('GET', `${BASE}/${t.id}`, { token: ALL })).body.acl).toHaveLength(1);
    });

    it('DELETE /acl/:ip matches the canonical form of what it is given', async () => {
      const t = await trunk({ acl: ['203.0.113.0/24', '10.0.0.0/8', '198.51.100.7/32'], enableDigestAuth: true });
      const hostBits = await app.request('DELETE', `${BASE}/${t.id}/acl/${encodeURIComponent('10.20.30.40/8')}`, { token: ALL });
      expect(hostBits.status, JSON.stringify(hostBits.body)).toBe(200);
      expect(hostBits.body.acl.map((a: { ip: string }) => a.ip)).toEqual(['203.0.113.0/24', '198.51.100.7/32']);
      const mapped = await app.request('DELETE', `${BASE}/${t.id}/acl/${encodeURIComponent('::ffff:198.51.100.7')}`, { token: ALL });
      expect(mapped.status, JSON.stringify(mapped.body)).toBe(200);
      expect(mapped.body.acl.map((a: { ip: string }) => a.ip)).toEqual(['203.0.113.0/24']);
    });
  });

  describe('digest credentials', () => {
    it('POST /credentials: 201 {username, password}, 24 letters and digits, stored only as sealed HA1', async () => {
      const t = await trunk({ enableDigestAuth: true });
      const res = await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: 'pbx-01' } });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['password', 'username']);
      expect(res.body.username).toBe('pbx-01');
      expect(res.body.password).toMatch(/^[A-Za-z0-9]{24}$/);
      const [row] = await rows('select * from telephony_trunk_digest_users where trunk_id = $1', [t.id]);
      expect(JSON.stringify(row)).not.toContain(res.body.password);
      const realm = `${t.domain}.sip-us.sip.carrier-a.test`;
      expect(row!.realm).toBe(realm);
      const md5 = createHash('md5').update(`pbx-01:${realm}:${res.body.password}`).digest('hex');
      const sha = createHash('sha256').update(`pbx-01:${realm}:${res.body.password}`).digest('hex');
      expect(row!.ha1_md5).not.toBe(md5);
      expect(app.store.secretBox.open(row!.ha1_md5 as string)).toBe(md5);
      expect(app.store.secretBox.open(row!.ha1_sha256 as string)).toBe(sha);
      const users = await app.request('GET', `${BASE}/${t.id}/credentials`, { token: ALL });
      expect(users.status).toBe(200);
      expect(users.body).toEqual({ users: ['pbx-01'] });
      const read = await app.request('GET', `${BASE}/${t.id}`, { token: ALL });
      expect(read.body.digestUsers).toEqual(['pbx-01']);
      expect(JSON.stringify(read.body)).not.toContain(res.body.password);
    });

    it('passwords differ every time (CSPRNG)', async () => {
      const t = await trunk({ enableDigestAuth: true });
      const seen = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const r = await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: `user-${i}x` } });
        seen.add(r.body.password);
      }
      expect(seen.size).toBe(5);
    });

    it('refuses bad usernames with the spec\'s rule, duplicates, and trunks without digest auth', async () => {
      const t = await trunk({ enableDigestAuth: true });
      const rule = 'Username must be 5-32 characters, alphanumeric and dashes only';
      for (const username of ['abcd', 'a'.repeat(33), '-abcde', 'abcde-', 'ab_cde', 'ab cde', 12345]) {
        const r = await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username } });
        expect(r.status, String(username)).toBe(400);
        expect(r.body).toEqual({ statusCode: 400, error: 'Bad Request', message: [rule] });
      }
      const none = await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: {} });
      expect(none.body.message).toEqual([rule]);
      for (const ok of ['abcde', 'a'.repeat(32), 'A1-b2-C3']) {
        expect((await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: ok } })).status, ok).toBe(201);
      }
      const dup = await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: 'abcde' } });
      expect(dup.status).toBe(400);
      expect(dup.body.message).toBe('Username already exists');
      const aclOnly = await trunk();
      const off = await app.request('POST', `${BASE}/${aclOnly.id}/credentials`, { token: ALL, body: { username: 'abcde' } });
      expect(off.status).toBe(400);
      expect(off.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Digest authentication is not enabled on this trunk' });
      expect((await app.request('GET', `${BASE}/${aclOnly.id}/credentials`, { token: ALL })).body).toEqual({ users: [] });
    });

    it('refuses the 201st digest user', async () => {
      const t = await trunk({ enableDigestAuth: true });
      // 199 straight into the store, then the 200th and 201st through the route.
      const values = Array.from({ length: 199 }, (_, i) => `('${t.id}', 'bulk-${String(i).padStart(3, '0')}', 'r', 'x', 'x', 0)`).join(',');
      await app.store.sql.query(`insert into telephony_trunk_digest_users (trunk_id, username, realm, ha1_md5, ha1_sha256, created_at) values ${values}`);
      expect((await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: 'last-one' } })).status).toBe(201);
      const full = await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: 'one-more' } });
      expect(full.status).toBe(400);
      expect(full.body.message).toBe('Maximum 200 digest users allowed');
      expect((await app.request('GET', `${BASE}/${t.id}/credentials`, { token: ALL })).body.users).toHaveLength(200);
    });

    it('rotate: 201 with a new password once; the old HA1 is replaced; unknown user 404 User not found', async () => {
      const t = await trunk({ enableDigestAuth: true });
      const first = (await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: 'rotator' } })).body;
      const [before] = await rows('select ha1_md5 from telephony_trunk_digest_users where trunk_id = $1', [t.id]);
      const res = await app.request('POST', `${BASE}/${t.id}/credentials/rotator/rotate`, { token: ALL });
      expect(res.status).toBe(201);
      expect(res.body.username).toBe('rotator');
      expect(res.body.password).toMatch(/^[A-Za-z0-9]{24}$/);
      expect(res.body.password).not.toBe(first.password);
      const [after] = await rows('select ha1_md5 from telephony_trunk_digest_users where trunk_id = $1', [t.id]);
      const realm = `${t.domain}.sip-us.sip.carrier-a.test`;
      expect(app.store.secretBox.open(after!.ha1_md5 as string)).toBe(createHash('md5').update(`rotator:${realm}:${res.body.password}`).digest('hex'));
      expect(after!.ha1_md5).not.toBe(before!.ha1_md5);
      const unknown = await app.request('POST', `${BASE}/${t.id}/credentials/nobody/rotate`, { token: ALL });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'User not found' });
    });

    it('DELETE /credentials/:username: {success: true}; then 404 User not found', async () => {
      const t = await trunk({ enableDigestAuth: true });
      await app.request('POST', `${BASE}/${t.id}/credentials`, { token: ALL, body: { username: 'goner' } });
      const res = await app.request('DELETE', `${BASE}/${t.id}/credentials/goner`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect((await app.request('GET', `${BASE}/${t.id}/credentials`, { token: ALL })).body).toEqual({ users: [] });
      const again = await app.request('DELETE', `${BASE}/${t.id}/credentials/goner`, { token: ALL });
      expect(again.status).toBe(404);
      expect(again.body.message).toBe('User not found');
    });
  });

  describe('agent link', () => {
    it('POST /agents/:agentId links (201, defaultAgentId); DELETE /agent unlinks (200); unlinking twice is 400', async () => {
      const t = await trunk();
      const res = await app.request('POST', `${BASE}/${t.id}/agents/agt_support`, { token: ALL });
      expect(res.status).toBe(201);
      expect(res.body.defaultAgentId).toBe('agt_support');
      expect((await app.request('GET', `${BASE}/${t.id}`, { token: ALL })).body.defaultAgentId).toBe('agt_support');
      const off = await app.request('DELETE', `${BASE}/${t.id}/agent`, { token: ALL });
      expect(off.status).toBe(200);
      expect(off.body.defaultAgentId).toBeUndefined();
      const again = await app.request('DELETE', `${BASE}/${t.id}/agent`, { token: ALL });
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'No agent is currently linked to this trunk' });
    });

    it('a foreign or unknown agent is 403 before the trunk lookup, even for an unknown trunk', async () => {
      const t = await trunk();
      for (const [trunkId, agentId] of [[t.id, 'agt_globex'], ['trk_nope', 'agt_globex'], ['trk_nope', 'agt_missing']]) {
        const res = await app.request('POST', `${BASE}/${trunkId}/agents/${agentId}`, { token: ALL });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Agent does not belong to this organization' });
      }
      expect((await app.request('GET', `${BASE}/${t.id}`, { token: ALL })).body.defaultAgentId).toBeUndefined();
      const unknownTrunk = await app.request('POST', `${BASE}/trk_nope/agents/agt_support`, { token: ALL });
      expect(unknownTrunk.status).toBe(404);
      expect(unknownTrunk.body.message).toBe('SIP trunk not found');
    });

    it('writes an audit entry per mutation', async () => {
      const t = await trunk();
      await app.request('POST', `${BASE}/${t.id}/agents/agt_support`, { token: ALL });
      const actions = (await rows('select action from audit_log where target_id = $1 order by at, id', [t.id])).map((r) => r.action);
      expect(actions).toEqual(['telephony.trunk.created', 'telephony.trunk.agent_linked']);
    });
  });
});
