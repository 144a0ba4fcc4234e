/** Phone numbers (spec 02 parts 2.2, 3, 4.2, 7; contract telephony T1, T4) through HTTP against the started service. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startTelephonyApi, TELEPHONY_SEED } from '../../../helpers/telephony.js';

const ACME = '/developer/orgs/org_acme/phone-numbers';
const GLOBEX = '/developer/orgs/org_globex/phone-numbers';
const ALL = 'lk_tel_all';
const GUS = 'lk_globex_tel';
const SEARCH = '/developer/phone-numbers/available';

describe('phone number routes', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startTelephonyApi();
  });
  afterAll(async () => {
    await app?.stop();
  });

  const buy = (body: unknown, token = ALL, path = ACME) => app.request('POST', path, { token, body });
  const bought = async (msisdn: string, extra: Record<string, unknown> = {}) => {
    const res = await buy({ msisdn, ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const bad = (message: string | string[]) => ({ statusCode: 400, error: 'Bad Request', message });

  describe('GET /developer/phone-numbers/available', () => {
    it('offers carrier-a inventory in ascending order, limit 10 by default, owned numbers left out', async () => {
      const res = await app.request('GET', `${SEARCH}?country=us`, { token: 'lk_tel_none' });
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(10);
      expect(res.body.numbers).toHaveLength(10);
      // 15550100000 is Globex's (seed): the first offered is the next one.
      expect(res.body.numbers[0]).toEqual({ msisdn: '15550100001', country: 'US', type: 'mobile-lvn', features: ['voice', 'sms'], transport: 'carrier-a' });
      const msisdns = res.body.numbers.map((n: { msisdn: string }) => n.msisdn);
      expect([...msisdns].sort()).toEqual(msisdns);
    });

    it('lowers a limit over 50 to 50; other countries have no stock', async () => {
      expect((await app.request('GET', `${SEARCH}?country=US&limit=500`, { token: ALL })).body.count).toBe(50);
      expect((await app.request('GET', `${SEARCH}?country=US&limit=3`, { token: ALL })).body.count).toBe(3);
      expect((await app.request('GET', `${SEARCH}?country=de`, { token: ALL })).body).toEqual({ numbers: [], count: 0 });
    });

    it('carrier-b filters type, features, contains with search_pattern', async () => {
      const q = (s: string) => app.request('GET', `${SEARCH}?country=US&transport=carrier-b&${s}`, { token: ALL });
      const toll = (await q('type=landline-toll-free&limit=50')).body;
      expect(toll.count).toBe(50);
      expect(toll.numbers.every((n: { type: string; features: string[] }) => n.type === 'landline-toll-free' && n.features.join() === 'voice')).toBe(true);
      const sms = (await q('features=sms&type=mobile-lvn&limit=2')).body.numbers;
      // 15550200900 is Acme's (seed).
      expect(sms.map((n: { msisdn: string }) => n.msisdn)).toEqual(['15550200901', '15550200902']);
      const both = (await q('features=voice,sms&limit=50')).body.numbers;
      expect(both.every((n: { type: string }) => n.type === 'landline')).toBe(true);
      expect((await q('contains=1555020055&search_pattern=0&limit=50')).body.numbers.map((n: { msisdn: string }) => n.msisdn)).toEqual(
        Array.from({ length: 10 }, (_, i) => `155502005${5}${i}`),
      );
      const ends = (await q('contains=999&search_pattern=2')).body.numbers.map((n: { msisdn: string }) => n.msisdn);
      expect(ends).toEqual(['15550200999']);
      const inside = (await q('contains=5502001&limit=50')).body.numbers;
      expect(inside.length).toBe(50);
      expect(inside.every((n: { msisdn: string }) => n.msisdn.includes('5502001'))).toBe(true);
    });

    it('Country is required; Unsupported transport; bad limit is field validation; no credential 401', async () => {
      for (const s of ['', '?country=', '?transport=carrier-b']) {
        const res = await app.request('GET', `${SEARCH}${s}`, { token: ALL });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(bad('Country is required'));
      }
      for (const t of ['byo-sip', 'carrier-z']) {
        const res = await app.request('GET', `${SEARCH}?country=US&transport=${t}`, { token: ALL });
        expect(res.body).toEqual(bad(`Unsupported transport: ${t}`));
      }
      for (const limit of ['0', '-1', 'ten']) {
        const res = await app.request('GET', `${SEARCH}?country=US&limit=${limit}`, { token: ALL });
        expect(res.status).toBe(400);
        expect(Array.isArray(res.body.message)).toBe(true);
      }
      expect((await app.request('GET', `${SEARCH}?country=ZZ`, { token: ALL })).body.message).toEqual(['country must be an ISO 3166-1 alpha-2 country code']);
      expect((await app.request('GET', `${SEARCH}?country=US`)).status).toBe(401);
    });
  });

  describe('POST /developer/orgs/:orgId/phone-numbers', () => {
    it('buys a carrier-a number (201): country, type and capabilities from the inventory, purchasedBy from the credential', async () => {
      const n = await bought('15550100010');
      expect(n).toMatchObject({
        msisdn: '15550100010', country: 'US', type: 'mobile-lvn', capabilities: ['voice', 'sms'], orgId: 'org_acme',
        purchasedBy: 'usr_ann', purchasedByEmail: 'ann@acme.test', status: 'active', transport: 'carrier-a',
      });
      expect(n.id).toMatch(/^pn_/);
      expect(typeof n.createdAt).toBe('number');
      const search = (await app.request('GET', `${SEARCH}?country=US&limit=50`, { token: ALL })).body.numbers.map((x: { msisdn: string }) => x.msisdn);
      expect(search).not.toContain('15550100010');
      const plus = await bought('+15550100011');
      expect(plus.msisdn).toBe('15550100011');
    });

    it('buys carrier-b numbers with country; refuses carrier-b without it', async () => {
      const res = await buy({ msisdn: '15550200010', transport: 'carrier-b' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(bad('country is required for carrier-b purchases'));
      const n = await bought('15550200010', { transport: 'carrier-b', country: 'us' });
      expect(n).toMatchObject({ transport: 'carrier-b', country: 'US', type: 'landline', capabilities: ['voice', 'sms'] });
    });

    it('refuses byo-sip and unknown transports, empty msisdn, non-E.164 and numbers the carrier does not offer', async () => {
      expect((await buy({ msisdn: '15550100020', transport: 'byo-sip' })).body).toEqual(bad('Unsupported transport: byo-sip'));
      expect((await buy({ msisdn: '15550100020', transport: 'pigeon' })).body).toEqual(bad('Unsupported transport: pigeon'));
      for (const body of [{}, { msisdn: '' }, { msisdn: '   ' }]) {
        const res = await buy(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(bad(['msisdn should not be empty']));
      }
      for (const msisdn of ['abc', '0123', '+1', '1555010002012345678']) {
        const res = await buy({ msisdn });
        expect(res.status, msisdn).toBe(400);
        expect(res.body.message, msisdn).toEqual(['msisdn must be an E.164 phone number']);
      }
      const notStock = await buy({ msisdn: '15550300000' });
      expect(notStock.status).toBe(422);
      expect(notStock.body).toMatchObject({ code: 'VENDOR_REJECTED', vendor: 'carrier-a' });
      const list = (await app.request('GET', `${ACME}?limit=200`, { token: ALL })).body.numbers.map((n: { msisdn: string }) => n.msisdn);
      expect(list).not.toContain('15550100020');
      expect(list).not.toContain('15550300000');
    });

    it('refuses a number owned by any organization: This number is already owned', async () => {
      await bought('15550100030');
      for (const [token, path] of [[ALL, ACME], [GUS, GLOBEX]]) {
        const res = await buy({ msisdn: '15550100030' }, token, path);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(bad('This number is already owned'));
      }
      // Globex's seeded number, bought by Acme.
      expect((await buy({ msisdn: '15550100000' })).body.message).toBe('This number is already owned');
    });

    it('two organizations buying the same number at the same moment: exactly one wins', async () => {
      for (let i = 0; i < 6; i++) {
        const msisdn = `1555010070${i}`;
        const [a, b] = await Promise.all([buy({ msisdn }, ALL, ACME), buy({ msisdn }, GUS, GLOBEX)]);
        const statuses = [a.status, b.status].sort();
        expect(statuses, msisdn).toEqual([201, 400]);
        const loser = a.status === 400 ? a : b;
        expect(loser.body).toEqual(bad('This number is already owned'));
        const owners = await app.store.sql.query<{ org_id: string }>(`select org_id from telephony_phone_numbers where msisdn = $1 and status <> 'released'`, [msisdn]);
        expect(owners).toHaveLength(1);
        expect(owners[0]!.org_id).toBe(a.status === 201 ? 'org_acme' : 'org_globex');
      }
    });
  });

  describe('GET /developer/orgs/:orgId/phone-numbers', () => {
    it('filters by status, country and transport; count is the total matching; limit and offset page', async () => {
      for (let i = 40; i < 45; i++) await bought(`155501000${i}`);
      const all = (await app.request('GET', `${ACME}?transport=carrier-a&limit=200`, { token: ALL })).body;
      expect(all.count).toBe(all.numbers.length);
      expect(all.count).toBeGreaterThanOrEqual(5);
      const page = (await app.request('GET', `${ACME}?transport=carrier-a&limit=2&offset=1`, { token: ALL })).body;
      expect(page.numbers).toHaveLength(2);
      expect(page.count).toBe(all.count);
      expect(page.numbers.map((n: { id: string }) => n.id)).toEqual(all.numbers.slice(1, 3).map((n: { id: string }) => n.id));
      const byo = (await app.request('GET', `${ACME}?transport=byo-sip`, { token: ALL })).body;
      expect(byo.count).toBe(1);
      expect(byo.numbers[0]).toMatchObject({ msisdn: '14155550123', transport: 'byo-sip', status: 'active', orgId: 'org_acme' });
      expect(byo.numbers[0].purchasedBy).toBeUndefined();
      await app.request('POST', `${ACME}/15550100044/suspend`, { token: ALL });
      const suspended = (await app.request('GET', `${ACME}?status=suspended`, { token: ALL })).body;
      expect(suspended.numbers.map((n: { msisdn: string }) => n.msisdn)).toEqual(['15550100044']);
      expect((await app.request('GET', `${ACME}?country=de`, { token: ALL })).body).toEqual({ numbers: [], count: 0 });
      expect((await app.request('GET', `${ACME}?country=us&limit=1`, { token: ALL })).body.numbers).toHaveLength(1);
      expect((await app.request('GET', ACME, { token: ALL })).body.numbers.every((n: { orgId: string }) => n.orgId === 'org_acme')).toBe(true);
    });

    it('limit defaults to 50; bad filters are field validation', async () => {
      for (let i = 0; i < 50; i++) await app.store.sql.query(`insert into telephony_phone_numbers (id, org_id, msisdn, country, type, capabilities, status, transport, created_at) values ($1, 'org_acme', $2, 'US', 'landline', '["voice"]', 'active', 'byo-sip', 1)`, [`pn_fill_${i}`, `1999000${String(i).padStart(4, '0')}`]);
      const res = (await app.request('GET', ACME, { token: ALL })).body;
      expect(res.numbers).toHaveLength(50);
      expect(res.count).toBeGreaterThan(50);
      for (const q of ['status=gone', 'transport=x', 'limit=0', 'offset=-1', 'country=XX']) {
        const r = await app.request('GET', `${ACME}?${q}`, { token: ALL });
        expect(r.status, q).toBe(400);
        expect(Array.isArray(r.body.message), q).toBe(true);
      }
    });
  });

  describe('one number', () => {
    it('GET: 200 the number; 404 Phone number not found when not owned, another org\'s, or released', async () => {
      await bought('15550100050');
      const res = await app.request('GET', `${ACME}/15550100050`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body.msisdn).toBe('15550100050');
      expect((await app.request('GET', `${ACME}/%2B15550100050`, { token: ALL })).status).toBe(200);
      for (const m of ['15550100999', '15550100000', 'abc']) {
        const r = await app.request('GET', `${ACME}/${m}`, { token: ALL });
        expect(r.status, m).toBe(404);
        expect(r.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Phone number not found' });
      }
      await app.request('DELETE', `${ACME}/15550100050`, { token: ALL });
      expect((await app.request('GET', `${ACME}/15550100050`, { token: ALL })).body.message).toBe('Phone number not found');
    });

    it('DELETE releases (200 {success: true}), irreversible; the number returns to the inventory', async () => {
      await bought('15550100060');
      const res = await app.request('DELETE', `${ACME}/15550100060`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      const again = await app.request('DELETE', `${ACME}/15550100060`, { token: ALL });
      expect(again.status).toBe(404);
      expect(again.body.message).toBe('Phone number not found or already released');
      expect((await app.request('POST', `${ACME}/15550100060/reactivate`, { token: ALL })).status).toBe(404);
      expect((await app.request('GET', `${ACME}?status=released`, { token: ALL })).body.numbers.map((n: { msisdn: string }) => n.msisdn)).toContain('15550100060');
      // Back in stock: another organization may buy it.
      expect((await buy({ msisdn: '15550100060' }, GUS, GLOBEX)).status).toBe(201);
    });

    it('DELETE of a byo-sip number is 400; of a suspended one 404 ... or already released', async () => {
      const byo = await app.request('DELETE', `${ACME}/14155550123`, { token: ALL });
      expect(byo.status).toBe(400);
      expect(byo.body).toEqual(bad('Cannot release number with transport: byo-sip'));
      expect((await app.request('GET', `${ACME}/14155550123`, { token: ALL })).body.status).toBe('active');
      await bought('15550100061');
      await app.request('POST', `${ACME}/15550100061/suspend`, { token: ALL });
      const res = await app.request('DELETE', `${ACME}/15550100061`, { token: ALL });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Phone number not found or already released');
    });

    it('suspend (201, active only) and reactivate (201, suspended only)', async () => {
      await bought('15550100070');
      const s = await app.request('POST', `${ACME}/15550100070/suspend`, { token: ALL });
      expect(s.status).toBe(201);
      expect(s.body).toMatchObject({ msisdn: '15550100070', status: 'suspended' });
      const s2 = await app.request('POST', `${ACME}/15550100070/suspend`, { token: ALL });
      expect(s2.status).toBe(404);
      expect(s2.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Phone number not found or not active' });
      // A suspended number is still owned.
      expect((await buy({ msisdn: '15550100070' }, GUS, GLOBEX)).body.message).toBe('This number is already owned');
      const r = await app.request('POST', `${ACME}/15550100070/reactivate`, { token: ALL });
      expect(r.status).toBe(201);
      expect(r.body.status).toBe('active');
      const r2 = await app.request('POST', `${ACME}/15550100070/reactivate`, { token: ALL });
      expect(r2.status).toBe(404);
      expect(r2.body.message).toBe('Phone number not found or not suspended');
      expect((await app.request('POST', `${ACME}/15550100998/suspend`, { token: ALL })).body.message).toBe('Phone number not found or not active');
      const actions = (await app.store.sql.query<{ action: string }>(`select a.action from audit_log a join telephony_phone_numbers n on n.id = a.target_id where n.msisdn = '15550100070' order by a.at, a.id`)).map((x) => x.action);
      expect(actions).toEqual(['telephony.number.purchased', 'telephony.number.suspended', 'telephony.number.reactivated']);
    });

    it('configure-voice: carrier-b voice 201; SMS-only 400; carrier-a fails at the carrier; not active 404', async () => {
      await bought('15550200520', { transport: 'carrier-b', country: 'US' });
      const ok = await app.request('POST', `${ACME}/15550200520/configure-voice`, { token: ALL });
      expect(ok.status).toBe(201);
      expect(ok.body).toEqual({ success: true });
      const sms = await app.request('POST', `${ACME}/15550200900/configure-voice`, { token: ALL });
      expect(sms.status).toBe(400);
      expect(sms.body).toEqual(bad('Phone number does not have voice capability'));
      await bought('15550100080');
      const a = await app.request('POST', `${ACME}/15550100080/configure-voice`, { token: ALL });
      expect(a.status).toBe(422);
      expect(a.body).toMatchObject({ code: 'VENDOR_REJECTED', vendor: 'carrier-a' });
      await app.request('POST', `${ACME}/15550200520/suspend`, { token: ALL });
      const off = await app.request('POST', `${ACME}/15550200520/configure-voice`, { token: ALL });
      expect(off.status).toBe(404);
      expect(off.body.message).toBe('Phone number not found or not active');
      expect((await app.request('POST', `${ACME}/15550100997/configure-voice`, { token: ALL })).body.message).toBe('Phone number not found or not active');
    });
  });

  describe('seed phoneNumbers', () => {
    it('are applied (byo-sip included) and a second application changes nothing', async () => {
      const before = await app.store.sql.query('select id, org_id, msisdn, status from telephony_phone_numbers where msisdn in ($1, $2) order by msisdn', ['14155550123', '15550200900']);
      expect(before).toHaveLength(2);
      const { readSeedFile } = await import('../../../../src/seed/seed-file.js');
      const { applySeed } = await import('../../../../src/seed/apply.js');
      const { familySeeds } = await import('../../../../src/modules/index.js');
      await applySeed(app.store.sql, await readSeedFile(TELEPHONY_SEED, familySeeds));
      const after = await app.store.sql.query('select id, org_id, msisdn, status from telephony_phone_numbers where msisdn in ($1, $2) order by msisdn', ['14155550123', '15550200900']);
      expect(after).toEqual(before);
    });

    it('a bad phoneNumbers entry fails the seed file with each problem named', async () => {
      const { parseSeed } = await import('../../../../src/seed/seed-file.js');
      const { familySeeds } = await import('../../../../src/modules/index.js');
      const seed = { orgs: [{ id: 'o', name: 'O' }], phoneNumbers: [{ orgId: 'x', msisdn: '+1', transport: 'fax', country: 'usa', type: 't', capabilities: 'voice', status: 'released' }] };
      expect(() => parseSeed(seed, familySeeds)).toThrow(/phoneNumbers\[0\]\.orgId[\s\S]*msisdn[\s\S]*transport[\s\S]*country[\s\S]*type[\s\S]*capabilities[\s\S]*status/);
    });
  });
});
