/**
 * ARCHITECTURE invariant 4: secrets never leave. Known header values and
 * signing secrets are seeded through the API, every drain route and a
 * delivery cycle run, and every response, log line, audit entry, metric and
 * delivery record is scanned for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { createLogger } from '../../../src/telemetry/logger.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';
const HEADER_VALUE = 'hdr-SECRET-value-7f3a9c';
const SIGNING_SECRET = 'sign-SECRET-value-2b8e1d';

describe('secrets never leave', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  const logLines: string[] = [];
  const answers: string[] = [];
  let minted: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    // The destination echoes request headers back, as a hostile or careless one might.
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify']) return false;
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ echoed: r.headers }));
      return true;
    });
    const logger = createLogger('trace', 'logdrain', { write: (line: string) => void logLines.push(line) });
    app = await startApp({ DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, RETRY_BASE_MS: '50', RETRY_MAX_MS: '100' }, 'start', logger);
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(method, path, { token: T, ...(body === undefined ? {} : { body }) });
    answers.push(JSON.stringify(res.body ?? ''));
    return res;
  };

  it('keeps header values and signing secrets out of every read, log line, audit entry, metric and delivery record', async () => {
    const created = await app.request('POST', ORG, {
      token: T,
      body: { name: 'secretive', type: 'http', endpoint: `${receiver.url}/s`, secret: SIGNING_SECRET, headers: [{ name: 'Authorization', value: `Bearer ${HEADER_VALUE}` }, { name: 'X-Key', value: HEADER_VALUE }] },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toBe(SIGNING_SECRET); // shown once, in this answer only
    const id = created.body.id as string;
    await call('POST', `${ORG}/${id}/verify`);
    await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.state === 'healthy', { what: 'verified' });
    await call('GET', ORG);
    await call('GET', `${ORG}/${id}`);
    await call('PATCH', `${ORG}/${id}`, { minSeverity: 'debug', headers: [{ name: 'X-Key', value: HEADER_VALUE }] });
    await call('POST', `${ORG}/${id}/test`);
    const rotated = await app.request('POST', `${ORG}/${id}/rotate-secret`, { token: T });
    minted = [rotated.body.secret.slice(6)];
    await call('POST', `${ORG}/${id}/pause`, { reason: 'scan' });
    await call('POST', `${ORG}/${id}/resume`);
    // A delivery cycle against the echoing destination: records go through the worker and fail with a 500 excerpt.
    const rec = { id: 'sec-1', orgId: 'org_acme', agentId: 'agt_support', agentName: 'support-bot', environment: 'production', source: 'mcp', event: 'error', severity: 'error', timestamp: new Date().toISOString(), executionId: 'e1', message: 'hello' };
    await app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: [rec] });
    await waitFor(() => receiver.batches().filter((r) => r.path === '/s').length >= 3, { what: 'delivery attempts' });
    await waitFor(async () => {
      const d = await call('GET', `${ORG}/${id}/deliveries?limit=100`);
      return d.body.deliveries.some((x: { responseExcerpt?: string; kind: string }) => x.kind === 'batch' && x.responseExcerpt);
    }, { what: 'delivery records with excerpts' });
    await call('GET', `/admin/orgs/org_acme/log-drains-audit?limit=100`);
    answers.push(await (await fetch(`${app.base}/metrics`)).text());
    answers.push(await (await fetch(`${app.base}/docs/openapi.json`)).text());
    const audit = await app.store.audit.page('org_acme', { limit: 1000 });
    const deliveries = await app.store.deliveries.page(id, { limit: 1000 });
    await call('DELETE', `${ORG}/${id}`);

    // The destination did get the secrets (so the scan would see them if they leaked back).
    expect(receiver.batches().some((r) => JSON.stringify(r.headers).includes(HEADER_VALUE))).toBe(true);
    const haystacks: [string, string][] = [
      ['responses', answers.join('\n')],
      ['logs', logLines.join('')],
      ['audit', JSON.stringify(audit)],
      ['deliveries', JSON.stringify(deliveries)],
    ];
    expect(logLines.length).toBeGreaterThan(0);
    // The echo did reach the excerpts, scrubbed: the scan below is not vacuous.
    expect(deliveries.some((d) => d.responseExcerpt?.includes('[scrubbed]'))).toBe(true);
    for (const [where, text] of haystacks) {
      for (const secret of [HEADER_VALUE, SIGNING_SECRET, ...minted]) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
    }
    // Audit entries hold no last4 either.
    expect(JSON.stringify(audit)).not.toContain(HEADER_VALUE.slice(-4));
    // The stored form is sealed.
    const raw = await app.store.sql.query("select headers::text as h, secret, previous_secret from drains where name = 'secretive'");
    expect(JSON.stringify(raw)).not.toContain(HEADER_VALUE);
    expect(JSON.stringify(raw)).not.toContain(SIGNING_SECRET);
  });
});
