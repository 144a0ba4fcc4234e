/**
 * Invariant 4 (docs/architecture.md): secrets never leave. Known signing secrets (given at
 * create, generated at create, minted by rotation), header values, API keys and session tokens are
 * seeded; every drain route, the log read routes, /metrics, the OpenAPI document and a delivery
 * cycle with failures (destinations echoing the request headers back in 500 and 400 bodies) run;
 * then every HTTP answer (status line, headers and body), every log line (pino at trace), the audit
 * table, the deliveries and dead_letters tables and /metrics are scanned for each secret, its base64
 * form and its `Bearer` header form. The only place a secret may appear is the answer that returns
 * it (create, rotate-secret), in its `secret` field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { createLogger } from '../../../src/telemetry/logger.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';
const HEADER_VALUE = 'hdr-SECRET-value-7f3a9c';
const BEARER_MARKER = 'brr-SECRET-marker-41d0e6';
const SIGNING_SECRET = 'sign-SECRET-value-2b8e1d';
/** Credentials used on the way: none of them may be echoed or logged either. */
const CREDENTIALS = ['lk_acme_manage', 'lk_acme_ingest', 'lk_acme_wild', 'sess_ann'];

/** Every form a leaked value could take in text: as is, base64 (plain and url-safe), and inside a Bearer header. */
function formsOf(secret: string): string[] {
  const forms = [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url'), Buffer.from(`Bearer ${secret}`).toString('base64')];
  return [...new Set(forms.map((f) => f.replace(/=+$/, '')))];
}

describe('secrets never leave', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  const logLines: string[] = [];
  const answers: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    // The destinations echo request headers back, as a hostile or careless one might: 500 (retried) and 400 (final).
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify']) return false;
      const status = r.path === '/s' ? 500 : r.path === '/s4' ? 400 : undefined;
      if (status === undefined) return false;
      res.writeHead(status, { 'content-type': 'application/json', 'x-echo-authorization': String(r.headers.authorization) }).end(JSON.stringify({ echoed: r.headers }));
      return true;
    });
    const logger = createLogger('trace', 'logdrain', { write: (line: string) => void logLines.push(line) });
    app = await startApp({ DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, RETRY_BASE_MS: '50', RETRY_MAX_MS: '100', HEARTBEAT_INTERVAL_MS: '500' }, 'start', logger);
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  /** One call, its whole answer (status, headers, body) kept for the scan. */
  const call = async (method: string, path: string, opts: { body?: unknown; token?: string } = {}) => {
    const res = await app.request(method, path, { token: opts.token ?? T, ...(opts.body === undefined ? {} : { body: opts.body }) });
    answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '')}`);
    return res;
  };
  /** An answer that returns a secret: the secret is checked where it belongs, and the rest is scanned like any other. */
  const callReturningSecret = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(method, path, { token: T, ...(body === undefined ? {} : { body }) });
    const { secret, ...rest } = res.body as { secret: string };
    answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${JSON.stringify(rest)}`);
    return { status: res.status, secret, body: res.body };
  };
  const verified = async (id: string) => {
    await call('POST', `${ORG}/${id}/verify`);
    await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.state === 'healthy', { what: 'verified' });
  };
  const rec = (id: string) => ({
    id, orgId: 'org_acme', agentId: 'agt_support', agentName: 'support-bot', environment: 'production', source: 'mcp', event: 'error', severity: 'error',
    timestamp: new Date().toISOString(), executionId: 'e1', message: 'hello',
  });

  it('keeps signing secrets, header values and credentials out of every answer, log line, audit entry, metric and table', async () => {
    const headers = [{ name: 'Authorization', value: `Bearer ${BEARER_MARKER}` }, { name: 'X-Key', value: HEADER_VALUE }];
    const given = await callReturningSecret('POST', ORG, { name: 'secretive', type: 'http', endpoint: `${receiver.url}/s`, secret: SIGNING_SECRET, headers });
    expect(given.status).toBe(201);
    expect(given.secret).toBe(SIGNING_SECRET); // shown once, in this answer only
    const id = given.body.id as string;
    // A second drain with a generated secret, answering 400 with the echo (a final failure: records dropped).
    const generated = await callReturningSecret('POST', ORG, { name: 'generated', type: 'http', endpoint: `${receiver.url}/s4`, headers });
    expect(generated.status).toBe(201);
    expect(generated.secret).toMatch(/^whsec_/);
    const id4 = generated.body.id as string;
    // A third that accepts, so a successful delivery is part of the cycle.
    const accepting = await callReturningSecret('POST', ORG, { name: 'accepting', type: 'http', endpoint: `${receiver.url}/ok`, headers });
    const idOk = accepting.body.id as string;
    for (const d of [id, id4, idOk]) await verified(d);

    await call('GET', ORG);
    await call('GET', `${ORG}/${id}`);
    await call('PATCH', `${ORG}/${id}`, { body: { minSeverity: 'debug', headers: [{ name: 'X-Key', value: HEADER_VALUE }, { name: 'Authorization', value: `Bearer ${BEARER_MARKER}` }] } });
    await call('POST', `${ORG}/${id}/test`);
    const rotated = await callReturningSecret('POST', `${ORG}/${idOk}/rotate-secret`);
    expect(rotated.secret).toMatch(/^whsec_/);
    const rotatedAgain = await call('POST', `${ORG}/${idOk}/rotate-secret`); // 409 while the window is open
    expect(rotatedAgain.status).toBe(409);
    await call('POST', `${ORG}/${id}/pause`, { body: { reason: 'scan' } });
    await call('POST', `${ORG}/${id}/resume`);

    // A delivery cycle: through the worker to the echoing destinations (500 retried, 400 dropped) and the accepting one.
    await call('POST', '/internal/records', { token: 'lk_acme_ingest', body: [rec('sec-1'), rec('sec-2')] });
    await waitFor(() => receiver.batches().filter((r) => r.path === '/s').length >= 3, { what: 'retried attempts' });
    await waitFor(async () => (await app.store.deliveries.droppedRecords(id4)).length > 0, { what: 'the 400 drop' });
    await waitFor(() => receiver.accepted().some((r) => r.path === '/ok'), { what: 'an accepted delivery' });
    await waitFor(async () => {
      const d = await call('GET', `${ORG}/${id}/deliveries?limit=100`);
      return d.body.deliveries.some((x: { responseExcerpt?: string; kind: string }) => x.kind === 'batch' && x.responseExcerpt);
    }, { what: 'delivery records with excerpts' });
    const finalized = await call('POST', `${ORG}/${idOk}/rotate-secret?finalize=true`);
    expect(finalized.status).toBe(200);
    for (const d of [id, id4, idOk]) {
      await call('GET', `${ORG}/${d}/deliveries?limit=100`);
      await call('GET', `${ORG}/${d}/deliveries?kind=dropped`);
    }
    await call('GET', '/admin/orgs/org_acme/log-drains-audit?limit=100');
    // Log reads, with the scope that covers them, and once with a session.
    await call('GET', '/developer/agents/agt_support/logs?limit=100', { token: 'lk_acme_wild' });
    await call('GET', '/admin/orgs/org_acme/logs?limit=100', { token: 'lk_acme_wild' });
    await call('GET', '/admin/orgs/org_acme/logs/download', { token: 'sess_ann' });
    // Refusals are answers too.
    await call('GET', `${ORG}/${id}`, { token: 'lk_acme_revoked' });
    await call('PATCH', `${ORG}/${id}`, { body: { headers: [{ name: 'X-Key', value: 'short' }] } });
    for (const path of ['/metrics', '/docs/openapi.json', '/healthz', '/readyz']) {
      const res = await fetch(`${app.base}${path}`);
      answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`);
    }
    // Heartbeats to the accepting drain carry the header values too: let one go.
    await waitFor(() => receiver.accepted().filter((r) => r.path === '/ok').length >= 2, { what: 'a heartbeat' });
    const audit = await app.store.audit.page('org_acme', { limit: 1000 });
    const tables = await app.store.sql.query("select 'deliveries' as t, row_to_json(d)::text as row from deliveries d union all select 'dead_letters', row_to_json(l)::text from dead_letters l");
    for (const d of [id, id4, idOk]) await call('DELETE', `${ORG}/${d}`);
    const afterDelete = await app.store.sql.query('select headers::text as h, secret, previous_secret from drains where id = any($1::text[])', [[id, id4, idOk]]);

    // The destinations did get the secrets (so the scan would see them if they came back) ...
    const sentHeaders = JSON.stringify(receiver.batches().map((r) => r.headers));
    expect(sentHeaders).toContain(HEADER_VALUE);
    expect(sentHeaders).toContain(BEARER_MARKER);
    // ... and the echoes reached the excerpts, scrubbed: the scan below is not vacuous.
    const deliveries = (await Promise.all([id, id4, idOk].map((d) => app.store.deliveries.page(d, { limit: 1000 })))).flat();
    expect(deliveries.filter((d) => d.responseExcerpt?.includes('[scrubbed]')).map((d) => d.statusCode)).toEqual(expect.arrayContaining([500, 400]));
    expect(logLines.length).toBeGreaterThan(0);
    // The logger runs at trace; the most verbose lines logdrain writes (debug: retries) were captured.
    expect(logLines.some((l) => l.includes('"level":20') && l.includes('deliver.retry'))).toBe(true);

    const secrets = [HEADER_VALUE, BEARER_MARKER, SIGNING_SECRET, generated.secret, accepting.secret, rotated.secret, ...CREDENTIALS];
    // The bodies of generated secrets (after whsec_) are base64 of the key already; scan them alone too.
    const needles = [...new Set([...secrets.flatMap(formsOf), ...[generated.secret, accepting.secret, rotated.secret].map((s) => s.slice('whsec_'.length))])];
    const haystacks: [string, string][] = [
      ['answers', answers.join('\n')],
      ['logs', logLines.join('')],
      ['audit', JSON.stringify(audit)],
      ['deliveries and dead letters', JSON.stringify(tables)],
      ['deleted drains', JSON.stringify(afterDelete)],
    ];
    for (const [where, text] of haystacks) {
      for (const needle of needles) expect(text.includes(needle), `${where} holds ${needle}`).toBe(false);
    }
    // Audit entries hold no last4 of a header value either.
    expect(JSON.stringify(audit)).not.toContain(HEADER_VALUE.slice(-4));
    expect(JSON.stringify(audit)).not.toContain(BEARER_MARKER.slice(-4));
  });

  it('keeps the stored form sealed', async () => {
    const created = await app.request('POST', ORG, { token: T, body: { name: 'sealed', type: 'http', endpoint: `${receiver.url}/sealed`, secret: SIGNING_SECRET, headers: [{ name: 'X-Key', value: HEADER_VALUE }] } });
    expect(created.status).toBe(201);
    const raw = await app.store.sql.query("select headers::text as h, secret, previous_secret from drains where name = 'sealed'");
    expect(raw).toHaveLength(1);
    for (const needle of [...formsOf(HEADER_VALUE), ...formsOf(SIGNING_SECRET)]) expect(JSON.stringify(raw)).not.toContain(needle);
    await app.request('DELETE', `${ORG}/${created.body.id}`, { token: T });
  });
});
