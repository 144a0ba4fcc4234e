/**
 * Errors a new user trips over name their fix, over a real socket, without changing what the
 * spec fixes (spec 01 parts 5 and 7: status, code, the 401 messages):
 *  - a drain endpoint refused for its address says how to exempt the host for local testing;
 *  - a failed verification says why (untrusted certificate, connection refused, timeout, body not
 *    the token, non-2xx) in the drain's `verification`;
 *  - a 415 names the Content-Type the route reads, with code UNSUPPORTED_MEDIA_TYPE;
 *  - an Authorization header that is not `Bearer <token>` keeps "No token provided" and adds a hint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startApp, waitFor, type TestApp } from '../../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../../helpers/receiver.js';
import { startHttpsReceiver } from '../../../../src/devtools/https-receiver.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('errors that name the fix', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  /** A receiver whose self-signed certificate the app was not told to trust. */
  let stranger: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    stranger = await startHttpsReceiver({ certDir: mkdtempSync(join(tmpdir(), 'logdrain-untrusted-')) });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost',
      NODE_EXTRA_CA_CERTS: receiver.caPath,
      DELIVERY_TIMEOUT_MS: '1500',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '100000',
      DRAIN_RATE_LIMIT_READ_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
    await stranger?.close();
  });

  describe('a drain endpoint refused for its address', () => {
    it('keeps 422 DRAIN_ENDPOINT_INVALID and field endpoint, and says DRAIN_ENDPOINT_ALLOW_HOSTS exempts the host (HTTPS still required)', async () => {
      for (const [endpoint, host] of [
        ['https://127.0.0.1/x', '127.0.0.1'],
        ['https://10.1.2.3/x', '10.1.2.3'],
        ['https://169.254.169.254/latest', '169.254.169.254'],
        ['https://metadata.google.internal/x', 'metadata.google.internal'],
        ['https://[::1]:8443/x', '::1'],
      ]) {
        const res = await app.request('POST', ORG, { token: T, body: { name: 'private', type: 'http', endpoint } });
        expect([res.status, res.body.code, res.body.field], endpoint).toEqual([422, 'DRAIN_ENDPOINT_INVALID', 'endpoint']);
        expect(res.body.message, endpoint).toContain(`DRAIN_ENDPOINT_ALLOW_HOSTS=${host}`);
        expect(res.body.message, endpoint).toMatch(/local testing/);
        expect(res.body.message, endpoint).toMatch(/HTTPS is still required/);
      }
    });

    it('gives no such hint where exempting the host would not help', async () => {
      const http = await app.request('POST', ORG, { token: T, body: { name: 'http', type: 'http', endpoint: 'http://example.com/x' } });
      expect([http.status, http.body.code]).toEqual([422, 'DRAIN_ENDPOINT_INVALID']);
      expect(http.body.message).toBe('Destination URL must use https.');
    });
  });

  describe('a failed verification says why', () => {
    async function failedVerification(endpoint: string) {
      const created = await app.request('POST', ORG, { token: T, body: { name: `v-${Math.random().toString(36).slice(2, 8)}`, type: 'http', endpoint } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      try {
        expect((await app.request('POST', `${ORG}/${created.body.id}/verify`, { token: T })).status).toBe(202);
        const drain = await waitFor(async () => {
          const r = await app.request('GET', `${ORG}/${created.body.id}`, { token: T });
          return r.body.verification ? r.body : undefined;
        }, { what: 'a verification outcome' });
        expect(drain.state).toBe('pending_verification');
        expect(drain.verification).toMatchObject({ outcome: 'failed', attemptedAt: expect.any(String), latencyMs: expect.any(Number) });
        return drain.verification as { errorClass: string; reason: string; statusCode?: number };
      } finally {
        await app.request('DELETE', `${ORG}/${created.body.id}`, { token: T });
      }
    }

    it('the response body did not equal the token', async () => {
      receiver.respondWith((r, res) => (r.path === '/wrong-echo' ? (res.writeHead(200).end('hello'), true) : false));
      const v = await failedVerification(`${receiver.url}/wrong-echo`);
      expect(v).toMatchObject({ statusCode: 200, errorClass: 'verify_mismatch' });
      expect(v.reason).toMatch(/did not equal the token sent in the X-Svc-Verify header/);
    });

    it('a non-2xx status', async () => {
      receiver.respondWith((r, res) => (r.path === '/down' ? (res.writeHead(503).end(), true) : false));
      const v = await failedVerification(`${receiver.url}/down`);
      expect(v).toMatchObject({ statusCode: 503, errorClass: 'http_5xx' });
      expect(v.reason).toMatch(/answered HTTP 503; verification needs a 2xx answer/);
    });

    it('the TLS certificate was not trusted: points at NODE_EXTRA_CA_CERTS', async () => {
      const v = await failedVerification(`${stranger.url}/x`);
      expect(v.errorClass).toBe('tls');
      expect(v.reason).toMatch(/TLS certificate of localhost:\d+ was not trusted \([A-Z_]+\)/);
      expect(v.reason).toContain('NODE_EXTRA_CA_CERTS');
    });

    it('connection refused', async () => {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const v = await failedVerification(`https://localhost:${port}/x`);
      expect(v.errorClass).toBe('connect');
      expect(v.reason).toMatch(/^Connection refused by localhost:\d+/);
    });

    it('a timeout', async () => {
      receiver.respondWith((r) => r.path === '/silent');
      const v = await failedVerification(`${receiver.url}/silent`);
      expect(v.errorClass).toBe('timeout');
      expect(v.reason).toMatch(/did not answer in time \(DELIVERY_TIMEOUT_MS\)/);
    });

    afterAll(() => receiver.respondWith(undefined));
  });

  describe('415 Unsupported Media Type', () => {
    it('keeps 415, adds code UNSUPPORTED_MEDIA_TYPE and names application/json on the drain routes', async () => {
      const res = await app.request('POST', ORG, { token: T, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE', accepted: ['application/json'] });
      expect(res.body.message).toContain('Content-Type: application/json');
    });

    it('names application/x-ndjson and application/json on the ingest route', async () => {
      const res = await app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: '<records/>', headers: { 'content-type': 'application/xml' } });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', accepted: ['application/x-ndjson', 'application/json'] });
      expect(res.body.message).toContain('Content-Type: application/x-ndjson or application/json');
    });
  });

  describe('401 for an Authorization header without the Bearer scheme', () => {
    it('keeps the spec\'s message "No token provided" and adds a hint to send Authorization: Bearer <token>', async () => {
      for (const authorization of [T, `Basic ${Buffer.from(`${T}:`).toString('base64')}`, 'Token lk_acme_manage', 'Bearer']) {
        const res = await app.request('GET', ORG, { headers: { authorization } });
        expect(res.status, authorization).toBe(401);
        expect(res.body, authorization).toEqual({
          statusCode: 401, error: 'Unauthorized', message: 'No token provided', hint: 'Send the API key or session token as `Authorization: Bearer <token>`.',
        });
      }
    });

    it('answers no header at all exactly as before, and an unknown bearer token without a hint', async () => {
      expect((await app.request('GET', ORG)).body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'No token provided' });
      expect((await app.request('GET', ORG, { token: 'lk_nope' })).body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'Invalid or expired token' });
    });
  });
});
