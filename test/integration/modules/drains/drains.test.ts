import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../../helpers/receiver.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const MANAGE = 'lk_acme_manage';

describe('drain routes (first cut) over a real socket', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({ DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const create = (body: Record<string, unknown>, token = MANAGE) => app.request('POST', ORG, { token, body });

  describe('authentication and scopes', () => {
    it('answers 401 "No token provided" without or with a malformed Authorization header', async () => {
      for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }] as Record<string, string>[]) {
        const res = await app.request('GET', ORG, { headers });
        expect(res.status).toBe(401);
        // A header that is there but malformed also gets a hint (an additive field, spec 01 part 9.1).
        const hint = headers.authorization ? { hint: 'Send the API key or session token as `Authorization: Bearer <token>`.' } : {};
        expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'No token provided', ...hint });
      }
    });

    it('answers 401 "Invalid or expired token" for unknown and revoked keys, with a code for a revoked session', async () => {
      for (const token of ['lk_nope', 'lk_acme_revoked']) {
        const res = await app.request('GET', ORG, { token });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'Invalid or expired token' });
      }
      const revoked = await app.request('GET', ORG, { token: 'sess_ann_old' });
      expect(revoked.status).toBe(401);
      expect(revoked.body).toMatchObject({ message: 'Invalid or expired token', code: 'SESSION_REVOKED' });
    });

    it('refuses logs:* for the sensitive logs:manage with INSUFFICIENT_SCOPE naming the scope and resource', async () => {
      const res = await app.request('GET', ORG, { token: 'lk_acme_wild' });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        statusCode: 403, error: 'Forbidden', code: 'INSUFFICIENT_SCOPE', requiredScope: 'logs:manage',
        resourceType: 'organization', resourceId: 'org_acme',
      });
    });

    it('lets a legacy key and an admin session act as their owner', async () => {
      expect((await app.request('GET', ORG, { token: 'lk_acme_legacy' })).status).toBe(200);
      expect((await app.request('GET', ORG, { token: 'sess_ann' })).status).toBe(200);
    });

    it('answers the same RESOURCE_NOT_PROJECTED for another organization and a nonexistent one', async () => {
      const other = await app.request('GET', '/admin/orgs/org_globex/log-drains', { token: MANAGE });
      const none = await app.request('GET', '/admin/orgs/org_nowhere/log-drains', { token: MANAGE });
      expect(other.status).toBe(403);
      expect(other.body.code).toBe('RESOURCE_NOT_PROJECTED');
      const strip = (b: Record<string, unknown>) => ({ ...b, resourceId: undefined, message: undefined });
      expect(strip(other.body)).toEqual(strip(none.body));
    });
  });

  describe('create, read, list, delete', () => {
    it('creates an http/json drain in pending_verification and shows the secret only once', async () => {
      const res = await create({ name: 'first', type: 'http', endpoint: `${receiver.url}/in`, headers: [{ name: 'X-Api-Key', value: 'supersecretvalue1234' }] });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'first', type: 'http', format: 'json', state: 'pending_verification', orgId: 'org_acme', version: 1 });
      expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(res.body.headers).toEqual([{ name: 'X-Api-Key', last4: '1234' }]);
      expect(res.body.health.hourly).toHaveLength(24);
      expect(res.body.createdBy).toEqual({ type: 'user', id: 'usr_ann' });
      expect(res.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

      const read = await app.request('GET', `${ORG}/${res.body.id}`, { token: MANAGE });
      expect(read.status).toBe(200);
      expect(read.body.secret).toBeUndefined();
      expect(JSON.stringify(read.body)).not.toContain('supersecretvalue');
      expect(JSON.stringify(read.body)).not.toContain(res.body.secret.slice(6, 20));

      const list = await app.request('GET', ORG, { token: MANAGE });
      expect(list.body.limits).toEqual({ maxDrains: 5 });
      expect(list.body.drains.map((d: { id: string }) => d.id)).toContain(res.body.id);
    });

    it('refuses a taken name with 409 DRAIN_NAME_TAKEN and frees it on delete', async () => {
      const a = await create({ name: 'dup', type: 'http', endpoint: `${receiver.url}/a` });
      expect(a.status).toBe(201);
      const b = await create({ name: 'dup', type: 'http', endpoint: `${receiver.url}/b` });
      expect(b.status).toBe(409);
      expect(b.body.code).toBe('DRAIN_NAME_TAKEN');
      expect((await app.request('DELETE', `${ORG}/${a.body.id}`, { token: MANAGE })).status).toBe(204);
      expect((await app.request('GET', `${ORG}/${a.body.id}`, { token: MANAGE })).status).toBe(404);
      expect((await app.request('DELETE', `${ORG}/${a.body.id}`, { token: MANAGE })).body.code).toBe('DRAIN_NOT_FOUND');
      const again = await create({ name: 'dup', type: 'http', endpoint: `${receiver.url}/b` });
      expect(again.status).toBe(201);
      await app.request('DELETE', `${ORG}/${again.body.id}`, { token: MANAGE });
    });

    it('validates fields with DRAIN_VALIDATION_FAILED naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ type: 'http', endpoint: `${receiver.url}/x` }, 'name'],
        [{ name: 'x'.repeat(65), type: 'http', endpoint: `${receiver.url}/x` }, 'name'],
        [{ name: 'n', type: 'smtp', endpoint: `${receiver.url}/x` }, 'type'],
        [{ name: 'n', type: 'http', endpoint: `${receiver.url}/x`, format: 'xml' }, 'format'],
        [{ name: 'n', type: 'http', endpoint: `${receiver.url}/x`, headers: [{ name: 'bad name', value: 'v' }] }, 'headers[0].name'],
        [{ name: 'n', type: 'http', endpoint: `${receiver.url}/x`, headers: [{ name: 'X-A', value: 'a\r\nX-Injected: 1' }] }, 'headers[0].value'],
        [{ name: 'n', type: 'http', endpoint: `${receiver.url}/x`, minSeverity: 'loud' }, 'minSeverity'],
        [{ name: 'n', type: 'http', endpoint: `${receiver.url}/x`, sampling: { debug: 0 } }, 'sampling'],
        [{ name: 'n', type: 'http', endpoint: `${receiver.url}/x`, surprise: 1 }, 'surprise'],
      ];
      for (const [body, field] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, code: 'DRAIN_VALIDATION_FAILED', field });
        expect(Array.isArray(res.body.message)).toBe(true);
      }
    });

    it('refuses non-https and private endpoints with DRAIN_ENDPOINT_INVALID', async () => {
      for (const endpoint of ['http://example.com/x', 'https://10.0.0.8/x', 'https://2130706433/x', 'https://[::ffff:7f00:1]/x', 'https://169.254.169.254/latest']) {
        const res = await create({ name: 'bad-endpoint', type: 'http', endpoint });
        expect(res.status, endpoint).toBe(422);
        expect(res.body.code).toBe('DRAIN_ENDPOINT_INVALID');
      }
    });

    it('refuses agents outside the organization and content without acknowledgement', async () => {
      const agents = await create({ name: 'agents', type: 'http', endpoint: `${receiver.url}/x`, agents: ['agt_support', 'agt_globex'] });
      expect(agents.status).toBe(422);
      expect(agents.body.code).toBe('DRAIN_AGENT_NOT_IN_ORG');
      const content = await create({ name: 'content', type: 'http', endpoint: `${receiver.url}/x`, includeContent: true });
      expect(content.status).toBe(422);
      expect(content.body.code).toBe('DRAIN_CONTENT_ACK_REQUIRED');
      const rule = await create({ name: 'rule', type: 'http', endpoint: `${receiver.url}/x`, scrubRules: [{ id: 'r', pattern: '(a+)+$' }] });
      expect(rule.status).toBe(422);
      expect(rule.body.code).toBe('DRAIN_SCRUB_RULE_INVALID');
    });
  });

  describe('verification', () => {
    it('moves pending_verification to healthy when the destination echoes the token, and records a verify delivery', async () => {
      const created = await create({ name: 'verify-ok', type: 'http', endpoint: `${receiver.url}/verify-ok` });
      const v = await app.request('POST', `${ORG}/${created.body.id}/verify`, { token: MANAGE });
      expect(v.status).toBe(202);
      expect(v.body.verificationId).toMatch(/^[0-9A-Z]{26}$/);
      expect(Date.parse(v.body.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);
      const drain = await waitFor(async () => {
        const r = await app.request('GET', `${ORG}/${created.body.id}`, { token: MANAGE });
        return r.body.state === 'healthy' ? r.body : undefined;
      }, { what: 'healthy state' });
      expect(drain.verifiedAt).toMatch(/Z$/);
      expect(drain.verification).toMatchObject({ outcome: 'ok', statusCode: 200 });
      const challenge = receiver.requests.find((r) => r.path === '/verify-ok')!;
      expect(typeof challenge.headers['x-svc-verify']).toBe('string');
      const deliveries = await app.request('GET', `${ORG}/${created.body.id}/deliveries?kind=verify`, { token: MANAGE });
      expect(deliveries.body.deliveries).toHaveLength(1);
      expect(deliveries.body.deliveries[0]).toMatchObject({ kind: 'verify', ok: true, statusCode: 200 });
    });

    it('stays pending when the destination does not echo the token', async () => {
      receiver.respondWith((r, res) => {
        if (r.path !== '/verify-bad') return false;
        res.writeHead(200).end('not the token');
        return true;
      });
      try {
        const created = await create({ name: 'verify-bad', type: 'http', endpoint: `${receiver.url}/verify-bad` });
        await app.request('POST', `${ORG}/${created.body.id}/verify`, { token: MANAGE });
        const drain = await waitFor(async () => {
          const r = await app.request('GET', `${ORG}/${created.body.id}`, { token: MANAGE });
          return r.body.verification ? r.body : undefined;
        }, { what: 'a verification outcome' });
        expect(drain.state).toBe('pending_verification');
        expect(drain.verification.outcome).toBe('failed');
        expect(drain.verifiedAt).toBeNull();
      } finally {
        receiver.respondWith(undefined);
      }
    });
  });

  it('refuses an unknown delivery kind and a malformed cursor with 400', async () => {
    const created = await create({ name: 'kinds', type: 'http', endpoint: `${receiver.url}/k` });
    const bad = await app.request('GET', `${ORG}/${created.body.id}/deliveries?kind=bogus`, { token: MANAGE });
    expect(bad.status).toBe(400);
    const cursor = await app.request('GET', `${ORG}/${created.body.id}/deliveries?cursor=%%%`, { token: MANAGE });
    expect(cursor.status).toBe(400);
    const limit = await app.request('GET', `${ORG}/${created.body.id}/deliveries?limit=101`, { token: MANAGE });
    expect(limit.status).toBe(400);
  });

  it('refuses a sixth drain with 422 DRAIN_LIMIT_REACHED', async () => {
    const live = (await app.request('GET', ORG, { token: MANAGE })).body.drains.length as number;
    for (let i = live; i < 5; i++) expect((await create({ name: `fill-${i}`, type: 'http', endpoint: `${receiver.url}/f` })).status).toBe(201);
    const res = await create({ name: 'sixth', type: 'http', endpoint: `${receiver.url}/f` });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('DRAIN_LIMIT_REACHED');
  });
});

describe('with LOG_DRAINS_ENABLED=false', () => {
  it('answers 404 DRAIN_NOT_FOUND on every drain route', async () => {
    const app = await startApp({ LOG_DRAINS_ENABLED: 'false' }, 'serve');
    try {
      const routes = [
        ['GET', ORG], ['POST', ORG], ['GET', `${ORG}/drn_x`], ['PATCH', `${ORG}/drn_x`], ['DELETE', `${ORG}/drn_x`],
        ['POST', `${ORG}/drn_x/verify`], ['POST', `${ORG}/drn_x/test`], ['POST', `${ORG}/drn_x/pause`], ['POST', `${ORG}/drn_x/resume`],
        ['POST', `${ORG}/drn_x/rotate-secret`], ['GET', `${ORG}/drn_x/deliveries`], ['GET', '/admin/orgs/org_acme/log-drains-audit'],
      ] as const;
      for (const [method, path] of routes) {
        const res = await app.request(method, path, { token: MANAGE, ...(method === 'POST' || method === 'PATCH' ? { body: {} } : {}) });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.code).toBe('DRAIN_NOT_FOUND');
      }
    } finally {
      await app.stop();
    }
  });
});
