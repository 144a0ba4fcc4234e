/**
 * Every encoding through the real delivery path (decoded independently),
 * OTLP partial success, scrubbing counts, heartbeats, and the delivery
 * faults a destination can cause: redirects, hangs, huge answers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { attributesOf, decodeExportLogsRequest, encodeExportLogsResponse } from '../../helpers/otlp-decoder.js';
import { ingest, record, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('encodings and delivery faults', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify']) return false;
      switch (r.path) {
        case '/otlp-partial':
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(encodeExportLogsResponse({ rejectedLogRecords: 2, errorMessage: 'two refused' }));
          return true;
        case '/redirect':
          res.writeHead(302, { location: `https://localhost:${receiver.port}/elsewhere` }).end();
          return true;
        case '/hang':
          return true; // never answers
        case '/huge':
          res.writeHead(400, { 'content-type': 'text/plain' }).end('x'.repeat(10 * 1024 * 1024));
          return true;
        default:
          return false;
      }
    });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BACKLOG_POLL_MS: '100',
      RETRY_BASE_MS: '20', RETRY_MAX_MS: '100', BATCH_LINGER_MS: '30', DELIVERY_TIMEOUT_MS: '2000',
      VENDOR_A_INTAKE_URL: `https://localhost:${receiver.port}/vendor-a/{site}`, HEARTBEAT_INTERVAL_MS: '1500',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  // Five drains per organization: each test removes its own.
  const created: string[] = [];
  afterEach(async () => {
    for (const id of created.splice(0)) await app.request('DELETE', `${ORG}/${id}`, { token: T });
  });
  // HEARTBEAT_INTERVAL_MS is short here: a new drain may get a heartbeat before its records, in its own request.
  const isHeartbeat = (r: { body: Buffer }) => r.body.includes('svc.drain.heartbeat');
  const at = (path: string) => receiver.batches().filter((r) => r.path === path && !isHeartbeat(r));
  const heartbeatsAt = (path: string) => receiver.batches().filter((r) => r.path === path && isHeartbeat(r));
  async function drain(body: Record<string, unknown>) {
    const res = await app.request('POST', ORG, { token: T, body: { minSeverity: 'debug', ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    created.push(res.body.id);
    await app.request('POST', `${ORG}/${res.body.id}/verify`, { token: T });
    await waitFor(async () => (await app.request('GET', `${ORG}/${res.body.id}`, { token: T })).body.state === 'healthy', { what: 'healthy' });
    return res.body.id as string;
  }
  const deliveries = async (id: string, q = '') => (await app.request('GET', `${ORG}/${id}/deliveries?limit=100${q}`, { token: T })).body.deliveries;

  it('delivers OTLP protobuf that the reference decoder reads, with auth headers and no signature', async () => {
    await drain({ name: 'otlp', type: 'otlp', endpoint: `${receiver.url}/v1/logs`, headers: [{ name: 'Authorization', value: 'Bearer otlp-token-0123456789' }] });
    const sent = records(4, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), attributes: { n: 3 } });
    await ingest(app, sent);
    const req = await waitFor(() => at('/v1/logs')[0], { what: 'an OTLP request' });
    expect(req.headers['content-type']).toBe('application/x-protobuf');
    expect(req.headers.authorization).toBe('Bearer otlp-token-0123456789');
    expect(req.headers['webhook-signature']).toBeUndefined();
    const decoded = decodeExportLogsRequest(req.body);
    const logs = decoded.resourceLogs[0].scopeLogs[0].logRecords;
    expect(logs.map((l: { attributes: never }) => attributesOf(l.attributes)['svc.record.id'])).toEqual(sent.map((r) => r.id));
    expect(attributesOf(decoded.resourceLogs[0].resource.attributes)['svc.org.id']).toBe('org_acme');
    expect(logs[0].eventName).toBe('svc.mcp.call');
  });

  it('counts an OTLP partial success as delivered with errorClass partial and the refused records', async () => {
    const id = await drain({ name: 'otlp-partial', type: 'otlp', endpoint: `${receiver.url}/otlp-partial` });
    await ingest(app, records(5));
    const row = await waitFor(async () => (await deliveries(id, '&kind=batch'))[0], { what: 'a batch delivery' });
    expect(row).toMatchObject({ ok: true, errorClass: 'partial', statusCode: 200, recordCount: 5 });
    const health = await waitFor(async () => {
      const h = (await app.request('GET', `${ORG}/${id}`, { token: T })).body.health;
      return h.rejectedCount24h === 2 ? h : undefined;
    }, { what: 'rejected counted' });
    expect(health.hourly[23].rejected).toBe(2);
    expect(health.deliveredCount24h).toBe(5);
  });

  it('sends vendor-a a JSON array at its site intake and vendor-b NDJSON', async () => {
    await drain({ name: 'va', type: 'vendor-a', site: 'eu1', headers: [{ name: 'X-Api-Key', value: 'vendor-a-key-000111' }] });
    await drain({ name: 'vb', type: 'vendor-b', endpoint: `${receiver.url}/vendor-b`, headers: [{ name: 'X-Vendor-Key', value: 'vendor-b-key-000111' }] });
    const sent = records(3, { severity: 'warn' });
    await ingest(app, sent);
    const a = await waitFor(() => at('/vendor-a/eu1')[0], { what: 'vendor-a' });
    expect(a.headers['x-api-key']).toBe('vendor-a-key-000111');
    const entries = JSON.parse(a.body.toString());
    expect(entries.map((e: { id: string }) => e.id)).toEqual(sent.map((r) => r.id));
    expect(entries[0]).toMatchObject({ status: 'warn', source: 'svc', eventName: 'svc.mcp.call', service: 'support-bot' });
    const b = await waitFor(() => at('/vendor-b')[0], { what: 'vendor-b' });
    const lines = b.body.toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(sent.map((r) => r.id));
    expect(lines[0]).toMatchObject({ level: 'warn', event: 'svc.mcp.call' });
  });

  it('scrubs bodies and string attributes and counts the hits per delivery and over 24 hours', async () => {
    const id = await drain({ name: 'scrub', type: 'http', endpoint: `${receiver.url}/scrub`, scrubRules: [{ id: 'card', pattern: '\\d{4}-\\d{4}-\\d{4}-\\d{4}' }] });
    await ingest(app, [
      record({ message: 'card 4111-1111-1111-1111 and Authorization: Bearer abcdefghijklmnop', attributes: { note: 'sk_live_abcdefghijklmnop' } }),
      record({ message: 'clean' }),
    ]);
    const req = await waitFor(() => at('/scrub')[0], { what: 'the scrubbed batch' });
    const body = JSON.parse(req.body.toString());
    expect(body.records[0].body).toBe('card [scrubbed] and Authorization: Bearer [scrubbed]');
    expect(body.records[0].attributes.note).toBe('[scrubbed]');
    expect(req.body.toString()).not.toContain('4111');
    const row = await waitFor(async () => (await deliveries(id, '&kind=batch'))[0], { what: 'the delivery' });
    expect(row.scrubHits).toBe(3);
    expect((await app.request('GET', `${ORG}/${id}`, { token: T })).body.health.scrubHits24h).toBe(3);
  });

  it('never follows a redirect: http_3xx, records dropped with the reason', async () => {
    const id = await drain({ name: 'redirect', type: 'http', endpoint: `${receiver.url}/redirect` });
    await ingest(app, records(2));
    const dropped = await waitFor(async () => (await deliveries(id, '&kind=dropped'))[0], { what: 'a dropped record' });
    expect(dropped).toMatchObject({ errorClass: 'http_3xx', recordCount: 2 });
    expect(at('/elsewhere')).toHaveLength(0);
  });

  it('gives up on a hanging destination after DELIVERY_TIMEOUT_MS with errorClass timeout, and parks', async () => {
    const id = await drain({ name: 'hang', type: 'http', endpoint: `${receiver.url}/hang` });
    await ingest(app, records(2));
    const row = await waitFor(async () => (await deliveries(id, '&kind=batch')).find((d: { errorClass?: string }) => d.errorClass === 'timeout'), { what: 'a timeout', timeoutMs: 20_000 });
    // DELIVERY_TIMEOUT_MS is 2 s here (not less: verifications and a 10 MB answer must fit in it on a loaded machine).
    expect(row.latencyMs).toBeGreaterThanOrEqual(1900);
    expect(row.latencyMs).toBeLessThan(8000);
    await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.health.backlog === 2, { what: 'parked', timeoutMs: 30_000 });
  });

  it('keeps at most 1 KB of a 10 MB answer', async () => {
    const id = await drain({ name: 'huge', type: 'http', endpoint: `${receiver.url}/huge` });
    await ingest(app, records(1));
    const row = await waitFor(async () => (await deliveries(id, '&kind=dropped')).length > 0 && (await deliveries(id, '&kind=batch'))[0], { what: 'the 400 row' });
    expect(row).toMatchObject({ statusCode: 400, errorClass: 'http_4xx', ok: false });
    expect(Buffer.byteLength(row.responseExcerpt)).toBeLessThanOrEqual(1024);
  });

  it('sends a heartbeat to an idle drain', async () => {
    const id = await drain({ name: 'idle', type: 'http', endpoint: `${receiver.url}/idle` });
    const hb = await waitFor(async () => (await deliveries(id, '&kind=heartbeat'))[0], { what: 'a heartbeat', timeoutMs: 10_000 });
    expect(hb).toMatchObject({ kind: 'heartbeat', ok: true, recordCount: 1 });
    const req = heartbeatsAt('/idle')[0];
    expect(req).toBeDefined();
  });
});
