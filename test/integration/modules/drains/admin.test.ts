/**
 * Drain administration to the letter of spec 01: every type, field
 * rule and code, the read form, the state machine, rotation, test, verify
 * limits, audit entries, on a real store over a real socket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startApp, waitFor, type TestApp } from '../../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../../helpers/receiver.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('drain administration', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  const created: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost',
      NODE_EXTRA_CA_CERTS: receiver.caPath,
      VENDOR_A_INTAKE_URL: `https://localhost:${receiver.port}/vendor-a/{site}/intake`,
      // This file makes far more than 60 mutations a minute; the spec's budgets are tested in rate-limits.test.ts.
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '100000',
      DRAIN_RATE_LIMIT_READ_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  /** Creates a drain and deletes it again after the test, so the 5-drain limit never interferes. */
  async function create(body: Record<string, unknown>, org = 'org_acme', token = T) {
    const res = await app.request('POST', `/admin/orgs/${org}/log-drains`, { token, body });
    if (res.status === 201) created.push(`${org}/${res.body.id}/${token}`);
    return res;
  }
  async function cleanup() {
    for (const c of created.splice(0)) {
      const [org, id, token] = c.split('/');
      await app.request('DELETE', `/admin/orgs/${org}/log-drains/${id}`, { token });
    }
  }
  const get = async (id: string) => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;
  async function verified(body: Record<string, unknown>) {
    const res = await create(body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await app.request('POST', `${ORG}/${res.body.id}/verify`, { token: T });
    await waitFor(async () => (await get(res.body.id)).state === 'healthy', { what: 'verified' });
    return res.body as { id: string; secret?: string };
  }

  describe('types', () => {
    it('creates all four types; vendor-a derives its endpoint from each of its six sites', async () => {
      expect((await create({ name: 'h', type: 'http', endpoint: `${receiver.url}/h` })).status).toBe(201);
      const otlp = await create({ name: 'o', type: 'otlp', endpoint: `${receiver.url}/v1/logs`, headers: [{ name: 'Authorization', value: 'Bearer otlp-token-123456' }] });
      expect(otlp.status).toBe(201);
      expect(otlp.body.secret).toBeUndefined();
      const b = await create({ name: 'b', type: 'vendor-b', endpoint: `${receiver.url}/vendor-b`, headers: [{ name: 'X-Vendor-Key', value: 'vendor-b-key-0001' }] });
      expect(b.status).toBe(201);
      await cleanup();
      for (const site of ['us1', 'us3', 'us5', 'eu1', 'ap1', 'gov']) {
        const a = await create({ name: `a-${site}`, type: 'vendor-a', site, headers: [{ name: 'X-Api-Key', value: 'vendor-a-key-0001' }] });
        expect(a.status, site).toBe(201);
        expect(a.body.endpoint).toBe(`https://localhost:${receiver.port}/vendor-a/${site}/intake`);
        expect(a.body.site).toBe(site);
        await cleanup();
      }
    });

    it('refuses what a type does not accept', async () => {
      const withEndpoint = await create({ name: 'a', type: 'vendor-a', site: 'us1', endpoint: `${receiver.url}/x` });
      expect(withEndpoint.status).toBe(422);
      expect(withEndpoint.body.code).toBe('DRAIN_ENDPOINT_NOT_ALLOWED');
      const badSite = await create({ name: 'a', type: 'vendor-a', site: 'mars' });
      expect(badSite.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'site' });
      const noSite = await create({ name: 'a', type: 'vendor-a' });
      expect(noSite.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'site' });
      const foreignHost = await create({ name: 'b', type: 'vendor-b', endpoint: 'https://93.184.216.34/intake' });
      expect(foreignHost.status).toBe(422);
      expect(foreignHost.body.code).toBe('DRAIN_ENDPOINT_NOT_ALLOWED');
      const noEndpoint = await create({ name: 'o', type: 'otlp' });
      expect(noEndpoint.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'endpoint' });
      const signedOtlp = await create({ name: 'o', type: 'otlp', endpoint: `${receiver.url}/o`, secret: 'a-secret-of-enough-length' });
      expect(signedOtlp.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'secret' });
    });

    it('answers DRAIN_TYPE_UNAVAILABLE for a type the deployment does not offer', async () => {
      const limited = await startApp({ DRAIN_TYPES_ENABLED: 'http', DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost' }, 'serve');
      try {
        const res = await limited.request('POST', ORG, { token: T, body: { name: 'o', type: 'otlp', endpoint: `${receiver.url}/o` } });
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({ code: 'DRAIN_TYPE_UNAVAILABLE', field: 'type' });
      } finally {
        await limited.stop();
      }
    });
  });

  describe('field rules', () => {
    const base = () => ({ name: 'rules', type: 'http', endpoint: `${receiver.url}/r` });
    it.each([
      ['headers', { headers: Array.from({ length: 11 }, (_, i) => ({ name: `X-H${i}`, value: 'v' })) }],
      ['headers[0].name', { headers: [{ name: 'x'.repeat(65), value: 'v' }] }],
      ['headers[0].name', { headers: [{ name: 'X_Under', value: 'v' }] }],
      ['headers[1].name', { headers: [{ name: 'X-A', value: 'v' }, { name: 'x-a', value: 'w' }] }],
      ['redact', { redact: Array.from({ length: 33 }, (_, i) => `k${i}`) }],
      ['scrubRules', { scrubRules: Array.from({ length: 21 }, (_, i) => ({ id: `r${i}`, pattern: 'x' })) }],
      ['sampling', { sampling: { debug: 0 } }],
      ['sampling', { sampling: { debug: 1.5 } }],
      ['sampling', { sampling: { info: 0.5 } }],
      ['environments', { environments: ['staging'] }],
      ['agents', { agents: 'some' }],
      ['includeContent', { includeContent: 'yes' }],
      ['name', { name: '' }],
    ])('refuses %s: %j', async (field, patch) => {
      const res = await create({ ...base(), ...patch });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'DRAIN_VALIDATION_FAILED', field });
      expect(res.body.message.length).toBeGreaterThan(0);
    });

    it('accepts the limits themselves', async () => {
      const res = await create({
        ...base(),
        headers: Array.from({ length: 10 }, (_, i) => ({ name: `X-H${i}`, value: 'value-long-enough' })),
        redact: Array.from({ length: 32 }, (_, i) => `k${i}`),
        scrubRules: Array.from({ length: 20 }, (_, i) => ({ id: `r${i}`, pattern: `tok${i}_[a-z0-9]{8}`, flags: 'i' })),
        sampling: { debug: 1 },
        name: 'n'.repeat(64),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.scrubRules).toEqual({ count: 20, ids: Array.from({ length: 20 }, (_, i) => `r${i}`) });
      await cleanup();
    });

    it.each([
      ['too long', 'a'.repeat(257)],
      ['backreference', '(a)\\1'],
      ['named backreference', '(?<x>a)\\k<x>'],
      ['lookbehind', '(?<=secret)\\w+'],
      ['negative lookbehind', '(?<!x)y'],
      ['nested quantifier', '(a+)+$'],
      ['nested quantifier with braces', '(x{2,}y*)*'],
      ['does not compile in RE2 (lookahead)', 'a(?=b)'],
      ['does not compile at all', '(unclosed'],
      ['matches the empty string', 'x*'],
      ['matches the empty string through an alternative', 'secret|'],
    ])('refuses a scrub rule: %s', async (_name, pattern) => {
      const res = await create({ ...base(), scrubRules: [{ id: 'r', pattern }] });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('DRAIN_SCRUB_RULE_INVALID');
    });

    it('refuses endpoints in every private notation, and names that resolve to them', async () => {
      for (const endpoint of [
        'ftp://example.com/x', 'https://127.0.0.1/x', 'https://0177.0.0.1/x', 'https://0x7f.0.0.1/x', 'https://2130706433/x',
        'https://[::1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://192.168.1.10/x', 'https://172.16.0.1/x', 'https://[fd00::1]/x',
        'https://169.254.169.254/latest/meta-data', 'https://[fe80::1]/x', 'https://metadata.google.internal/x', 'https://user:pw@93.184.216.34/x',
      ]) {
        const res = await create({ ...base(), endpoint });
        expect(res.status, endpoint).toBe(422);
        expect(res.body.code, endpoint).toBe('DRAIN_ENDPOINT_INVALID');
      }
    });
  });

  describe('read form', () => {
    it('carries every field of part 2.1 with the last4 rule and 24 hourly points', async () => {
      const res = await create({
        name: 'read', type: 'http', endpoint: `${receiver.url}/read`,
        headers: [{ name: 'X-Short', value: 'short' }, { name: 'X-Long', value: 'a-long-value-9876' }],
      });
      const d = await get(res.body.id);
      for (const k of ['id', 'orgId', 'name', 'type', 'endpoint', 'format', 'headers', 'selectors', 'state', 'verifiedAt', 'verification', 'health', 'quota', 'version', 'createdBy', 'createdAt', 'updatedAt']) {
        expect(d, k).toHaveProperty(k);
      }
      expect(d.headers).toEqual([{ name: 'X-Short', last4: '' }, { name: 'X-Long', last4: '9876' }]);
      expect(d.selectors).toEqual({ sources: ['*'], minSeverity: 'info', agents: '*', environments: ['production'], includeContent: false });
      for (const k of ['lastSuccessAt', 'lastFailureAt', 'lastStatusCode', 'backlog', 'backlogBytes', 'deliveredCount24h', 'droppedCount24h', 'rejectedCount24h', 'p50LatencyMs', 'scrubHits24h', 'pauseReason', 'hourly']) {
        expect(d.health, k).toHaveProperty(k);
      }
      const now = Math.floor(Date.now() / 3_600_000);
      expect(d.health.hourly).toHaveLength(24);
      expect(d.health.hourly[23].h).toBeGreaterThanOrEqual(now);
      expect(d.health.hourly[23].h).toBeLessThanOrEqual(now + 1);
      expect(d.health.hourly.map((p: { h: number }) => p.h)).toEqual(Array.from({ length: 24 }, (_, i) => d.health.hourly[0].h + i));
      expect(d.quota).toMatchObject({ usedEvents: 0, usedBytes: 0, degradation: 'none' });
      expect(Date.parse(d.quota.resetsAt)).toBeGreaterThan(Date.now());
      expect(d.createdAt).toMatch(/\.\d{3}Z$/);
      expect(d.secret).toBeUndefined();
      await cleanup();
    });
  });

  describe('PATCH and the state machine', () => {
    it('counts configuration versions, clears with null, keeps type, and re-verifies a new endpoint', async () => {
      const d = await verified({ name: 'patch', type: 'http', endpoint: `${receiver.url}/p1`, sampling: { debug: 0.5 }, redact: ['user.email'], scrubRules: [{ id: 'card', pattern: '\\d{16}' }], minSeverity: 'debug' });
      expect((await get(d.id)).version).toBe(1);
      const p1 = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { sampling: null, redact: null, scrubRules: null } });
      expect(p1.status).toBe(200);
      expect(p1.body).toMatchObject({ sampling: null, redact: null, scrubRules: null, version: 2, state: 'healthy' });
      const same = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { minSeverity: 'debug' } });
      expect(same.body.version).toBe(2);
      const typeChange = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { type: 'otlp' } });
      expect(typeChange.body).toMatchObject({ statusCode: 400, code: 'DRAIN_VALIDATION_FAILED', field: 'type' });
      const moved = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { endpoint: `${receiver.url}/p2`, sources: ['mcp'] } });
      expect(moved.body).toMatchObject({ state: 'pending_verification', version: 3, endpoint: `${receiver.url}/p2` });
      expect(moved.body.selectors.sources).toEqual(['mcp']);
      const bad = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { endpoint: 'https://10.1.2.3/x' } });
      expect(bad.body.code).toBe('DRAIN_ENDPOINT_INVALID');
      const ack = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { includeContent: true } });
      expect(ack.body.code).toBe('DRAIN_CONTENT_ACK_REQUIRED');
      const other = await create({ name: 'other', type: 'http', endpoint: `${receiver.url}/o` });
      const taken = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { name: 'other' } });
      expect(taken.status).toBe(409);
      expect(taken.body.code).toBe('DRAIN_NAME_TAKEN');
      expect(other.status).toBe(201);
      await cleanup();
    });

    it('pauses with pauseReason manual, resumes to degraded, never straight to healthy', async () => {
      const d = await verified({ name: 'pause', type: 'http', endpoint: `${receiver.url}/pause` });
      const paused = await app.request('POST', `${ORG}/${d.id}/pause`, { token: T, body: { reason: 'maintenance window' } });
      expect(paused.status).toBe(200);
      expect(paused.body.state).toBe('paused');
      expect(paused.body.health.pauseReason).toBe('manual');
      const resumed = await app.request('POST', `${ORG}/${d.id}/resume`, { token: T });
      expect(resumed.body.state).toBe('degraded');
      expect(resumed.body.health.pauseReason).toBeNull();
      expect((await app.request('POST', `${ORG}/${d.id}/pause`, { token: T })).body.state).toBe('paused');
      const badReason = await app.request('POST', `${ORG}/${d.id}/pause`, { token: T, body: { reason: 5 } });
      expect(badReason.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'reason' });
      // A drain never verified returns to waiting for verification, not to delivering.
      const fresh = await create({ name: 'fresh', type: 'http', endpoint: `${receiver.url}/fresh` });
      await app.request('POST', `${ORG}/${fresh.body.id}/pause`, { token: T });
      expect((await app.request('POST', `${ORG}/${fresh.body.id}/resume`, { token: T })).body.state).toBe('pending_verification');
      await cleanup();
    });
  });

  describe('operations', () => {
    it('rotates the secret: a 24-hour window, two signatures (new first), 409 while open, finalize closes it', async () => {
      const d = await verified({ name: 'rotate', type: 'http', endpoint: `${receiver.url}/rotate` });
      const rot = await app.request('POST', `${ORG}/${d.id}/rotate-secret`, { token: T });
      expect(rot.status).toBe(200);
      expect(rot.body.secret).toMatch(/^whsec_/);
      expect(Date.parse(rot.body.rotation.expiresAt) - Date.parse(rot.body.rotation.startedAt)).toBe(24 * 3_600_000);
      const again = await app.request('POST', `${ORG}/${d.id}/rotate-secret`, { token: T });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('DRAIN_ROTATION_IN_PROGRESS');
      expect(JSON.stringify(await get(d.id))).not.toContain(rot.body.secret.slice(6));

      const test = await app.request('POST', `${ORG}/${d.id}/test`, { token: T });
      expect(test.status).toBe(202);
      const got = await waitFor(() => receiver.batches().find((r) => r.headers['x-svc-batch-id'] === test.body.batchId), { what: 'the test batch' });
      const entries = String(got.headers['webhook-signature']).split(' ');
      expect(entries).toHaveLength(2);
      const only = (i: number) => ({ 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': entries[i]! });
      expect(() => new Webhook(rot.body.secret).verify(got.body.toString(), only(0))).not.toThrow();
      expect(() => new Webhook(d.secret!).verify(got.body.toString(), only(1))).not.toThrow();

      const bad = await app.request('POST', `${ORG}/${d.id}/rotate-secret?finalize=perhaps`, { token: T });
      expect(bad.status).toBe(400);
      const fin = await app.request('POST', `${ORG}/${d.id}/rotate-secret?finalize=true`, { token: T });
      expect(fin.status).toBe(200);
      expect(fin.body.id).toBe(d.id);
      expect(fin.body.signing).toEqual({ enabled: true, rotation: null });
      const test2 = await app.request('POST', `${ORG}/${d.id}/test`, { token: T });
      const got2 = await waitFor(() => receiver.batches().find((r) => r.headers['x-svc-batch-id'] === test2.body.batchId), { what: 'the second test batch' });
      expect(String(got2.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(() => new Webhook(rot.body.secret).verify(got2.body.toString(), { 'webhook-id': String(got2.headers['webhook-id']), 'webhook-timestamp': String(got2.headers['webhook-timestamp']), 'webhook-signature': String(got2.headers['webhook-signature']) })).not.toThrow();
      expect((await app.request('POST', `${ORG}/${d.id}/rotate-secret`, { token: T })).status).toBe(200);
      await cleanup();
    });

    it('answers 400 on rotate-secret for unsigned types', async () => {
      const o = await create({ name: 'otlp-rot', type: 'otlp', endpoint: `${receiver.url}/o` });
      const res = await app.request('POST', `${ORG}/${o.body.id}/rotate-secret`, { token: T });
      expect(res.status).toBe(400);
      expect(res.body.statusCode).toBe(400);
      await cleanup();
    });

    it('sends an svc.drain.test record through the delivery path and lists it in deliveries', async () => {
      const d = await verified({ name: 'test-route', type: 'http', endpoint: `${receiver.url}/test-route` });
      const res = await app.request('POST', `${ORG}/${d.id}/test`, { token: T });
      expect(res.status).toBe(202);
      expect(res.body.batchId).toMatch(/^[0-9A-Z]{26}$/);
      expect(Date.parse(res.body.enqueuedAt)).not.toBeNaN();
      const got = await waitFor(() => receiver.batches().find((r) => r.headers['x-svc-batch-id'] === res.body.batchId), { what: 'the test batch' });
      const batch = parseBatch(got);
      expect(batch.records).toHaveLength(1);
      expect(batch.records[0]!.eventName).toBe('svc.drain.test');
      expect(batch.resource['svc.org.id']).toBe('org_acme');
      const deliveries = await waitFor(async () => {
        const r = await app.request('GET', `${ORG}/${d.id}/deliveries?kind=test`, { token: T });
        return r.body.deliveries.length > 0 ? r.body.deliveries : undefined;
      }, { what: 'the test delivery record' });
      expect(deliveries[0]).toMatchObject({ kind: 'test', ok: true, batchId: res.body.batchId, recordCount: 1 });
      await cleanup();
    });

    it('passes vendor verification on any 2xx, and limits verify to 5 attempts an hour', async () => {
      const b = await create({ name: 'vb', type: 'vendor-b', endpoint: `${receiver.url}/vendor-b-intake` });
      for (let i = 0; i < 5; i++) {
        const v = await app.request('POST', `${ORG}/${b.body.id}/verify`, { token: T });
        expect(v.status).toBe(202);
      }
      await waitFor(async () => (await get(b.body.id)).state === 'healthy', { what: 'vendor-b healthy' });
      const sixth = await app.request('POST', `${ORG}/${b.body.id}/verify`, { token: T });
      expect(sixth.status).toBe(429);
      expect(sixth.body.code).toBe('DRAIN_VERIFY_RATE_LIMITED');
      expect(sixth.headers.get('retry-after')).toMatch(/^\d+$/);
      await cleanup();
    });

    it('honours the enterprise limit of 10 drains', async () => {
      const list = await app.request('GET', '/admin/orgs/org_globex/log-drains', { token: 'lk_globex_manage' });
      expect(list.body.limits).toEqual({ maxDrains: 10 });
      for (let i = 0; i < 10; i++) {
        expect((await create({ name: `g${i}`, type: 'http', endpoint: `${receiver.url}/g` }, 'org_globex', 'lk_globex_manage')).status).toBe(201);
      }
      const eleventh = await create({ name: 'g10', type: 'http', endpoint: `${receiver.url}/g` }, 'org_globex', 'lk_globex_manage');
      expect(eleventh.status).toBe(422);
      expect(eleventh.body.code).toBe('DRAIN_LIMIT_REACHED');
      await cleanup();
    });
  });

  describe('rate limits', () => {
    it('carries the suffixed budget headers on reads and mutations, never an unsuffixed one', async () => {
      const read = await app.request('GET', ORG, { token: T });
      expect(read.headers.get('x-ratelimit-limit-log-drains-read')).toBe('100000');
      expect(Number(read.headers.get('x-ratelimit-remaining-log-drains-read'))).toBeLessThan(100000);
      expect(Number(read.headers.get('x-ratelimit-reset-log-drains-read'))).toBeGreaterThan(0);
      expect(read.headers.get('x-ratelimit-remaining')).toBeNull();
      const d = await create({ name: 'rl', type: 'http', endpoint: `${receiver.url}/rl` });
      expect(d.headers.get('x-ratelimit-limit-log-drains-mutate')).toBe('100000');
      expect(d.headers.get('x-ratelimit-limit-log-drains-read')).toBeNull();
      await cleanup();
    });
  });

  describe('audit', () => {
    it('writes one entry per mutation with the names of part 6, recording only what may be recorded', async () => {
      const d = await verified({
        name: 'audited', type: 'http', endpoint: `https://localhost:${receiver.port}/audited?token=querysecret#ufragu`,
        // Fragments checked below hold a u, which no id (Crockford base32, hex), port or time holds.
        headers: [{ name: 'X-Audit-Key', value: 'audit-header-value-uvuw' }], secret: 'audit-signing-secret-value',
        scrubRules: [{ id: 'rule-id-1', pattern: 'patternsecret\\d+' }],
      });
      await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { minSeverity: 'warn' } });
      await app.request('POST', `${ORG}/${d.id}/pause`, { token: T, body: { reason: 'why not' } });
      await app.request('POST', `${ORG}/${d.id}/resume`, { token: T });
      await app.request('POST', `${ORG}/${d.id}/rotate-secret`, { token: T });
      await app.request('POST', `${ORG}/${d.id}/test`, { token: T });
      await app.request('DELETE', `${ORG}/${d.id}`, { token: T });
      created.splice(created.findIndex((c) => c.includes(d.id)), 1);

      const res = await app.request('GET', `/admin/orgs/org_acme/log-drains-audit?drainId=${d.id}&limit=100`, { token: T });
      expect(res.status).toBe(200);
      const actions = res.body.entries.map((e: { action: string }) => e.action).reverse();
      expect(actions).toEqual([
        'logs.drain.created', 'logs.drain.verified', 'logs.drain.updated', 'logs.drain.paused', 'logs.drain.resumed',
        'logs.drain.secret_rotated', 'logs.drain.test_sent', 'logs.drain.deleted',
      ]);
      const createdEntry = res.body.entries.at(-1);
      // A typed API key is recorded as itself (its non-secret label), not as the user who owns it.
      expect(createdEntry.actor).toEqual({ type: 'api_key', id: expect.stringMatching(/^key_[0-9a-f]{16}$/) });
      expect(createdEntry.details).toMatchObject({
        name: 'audited', type: 'http', format: 'json', state: 'pending_verification', version: 1,
        endpoint: `https://localhost:${receiver.port}/audited`, headerNames: ['X-Audit-Key'], scrubRuleCount: 1, signing: true,
      });
      const text = JSON.stringify(res.body);
      for (const secret of ['querysecret', 'ufragu', 'audit-header-value-uvuw', 'uvuw', 'audit-signing-secret-value', 'patternsecret', 'rule-id-1']) {
        expect(text, secret).not.toContain(secret);
      }
      const filtered = await app.request('GET', `/admin/orgs/org_acme/log-drains-audit?action=logs.drain.paused&limit=1`, { token: T });
      expect(filtered.body.entries).toHaveLength(1);
      expect(typeof filtered.body.nextCursor === 'string' || filtered.body.nextCursor === null).toBe(true);
      expect((await app.request('GET', '/admin/orgs/org_acme/log-drains-audit?action=nope', { token: T })).status).toBe(400);
    });
  });
});
