/**
 * Header and field injection (hostile input), over real sockets:
 *
 * - a drain's configured headers holding CR, LF or NUL (in a name or a
 *   value) are refused at create and at PATCH, as are more than the spec's
 *   10 headers and values over 4096 characters;
 * - records whose fields hold CR/LF (agent name and version, execution id,
 *   message, attribute keys and values) are delivered with those characters
 *   inside the JSON body, and nothing of them reaches the request's headers;
 * - request headers that are too many, too large or malformed are answered
 *   4xx (431 or 400) by the REST listener, never 5xx;
 * - request input is never reflected raw into a response header (the log
 *   read route's `Link` carries the query re-encoded);
 * - a request refused before its body arrived gets one answer and its
 *   connection closed, not held until the request time limit and answered
 *   a second time (408).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, type HttpsReceiver } from '../../helpers/receiver.js';
import { startReceiverApp, type ReceiverApp } from '../../helpers/receiver-app.js';
import { ingest, record, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

/** Headers a delivery may carry: the service's own, the transport's, and the drain's configured one. */
const DELIVERY_HEADERS = new Set([
  'host', 'connection', 'content-type', 'content-encoding', 'content-length', 'transfer-encoding', 'user-agent',
  'x-svc-schema', 'x-svc-batch-id', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-drain-token',
]);

/** Sends raw bytes to the API and returns the status line's code and the rest of the answer (the server closes or answers within 5 s). */
function rawRequest(port: number, text: string | Buffer): Promise<{ status: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      const answer = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      socket.destroy();
      if (m) resolve({ status: Number(m[1]), answer });
      else reject(new Error(`no HTTP answer: ${JSON.stringify(answer.slice(0, 200))}`));
    };
    socket.setTimeout(5000, done);
    socket.on('data', (c) => {
      chunks.push(c);
      // One complete answer is enough (keep-alive would otherwise leave the socket open).
      const s = Buffer.concat(chunks).toString('latin1');
      const head = s.indexOf('\r\n\r\n');
      const len = /\r\ncontent-length: (\d+)/i.exec(s);
      if (head >= 0 && (!len || s.length >= head + 4 + Number(len[1]))) done();
    });
    socket.on('end', done);
    socket.on('error', (e) => (chunks.length > 0 ? done() : reject(e)));
    socket.write(text);
  });
}

describe('header and field injection', () => {
  let ctx: ReceiverApp;
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    // A request time limit far past any test's timeout: a connection held until it would fail the test.
    ctx = await startReceiverApp({ BACKLOG_POLL_MS: '100', REQUEST_TIMEOUT_MS: '300000' });
    ({ app, receiver } = ctx);
  });
  afterAll(() => ctx?.stop());
  afterEach(() => ctx.deleteDrains());

  async function createDrain(body: Record<string, unknown>) {
    const res = await app.request('POST', ORG, { token: T, body: { type: 'http', minSeverity: 'debug', ...body } });
    if (res.status === 201) ctx.track(res.body.id);
    return res;
  }

  const BAD_HEADERS: [string, { name: string; value: string }, string][] = [
    ['CR LF in a value', { name: 'X-Token', value: 'abc\r\nX-Injected: 1' }, 'headers[0].value'],
    ['bare LF in a value', { name: 'X-Token', value: 'abc\nX-Injected: 1' }, 'headers[0].value'],
    ['bare CR in a value', { name: 'X-Token', value: 'abc\rdef' }, 'headers[0].value'],
    ['NUL in a value', { name: 'X-Token', value: 'abc\u0000def' }, 'headers[0].value'],
    ['a value beyond Latin-1', { name: 'X-Token', value: 'abc\u2028def' }, 'headers[0].value'],
    ['DEL in a value', { name: 'X-Token', value: 'abc\u007fdef' }, 'headers[0].value'],
    ['an empty value', { name: 'X-Token', value: '' }, 'headers[0].value'],
    ['a value of 4097 characters', { name: 'X-Token', value: 'v'.repeat(4097) }, 'headers[0].value'],
    ['CR LF in a name', { name: 'X-Token\r\nX-Injected', value: 'abc' }, 'headers[0].name'],
    ['NUL in a name', { name: 'X-Token\u0000', value: 'abc' }, 'headers[0].name'],
    ['a colon in a name', { name: 'X-Token:', value: 'abc' }, 'headers[0].name'],
    ['a space in a name', { name: 'X Token', value: 'abc' }, 'headers[0].name'],
    ['an empty name', { name: '', value: 'abc' }, 'headers[0].name'],
  ];

  it.each(BAD_HEADERS)('refuses a drain header with %s at create and at PATCH', async (_what, header, field) => {
    const refused = await createDrain({ name: 'inject-create', endpoint: `${receiver.url}/inject`, headers: [header] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'DRAIN_VALIDATION_FAILED', field });

    const ok = await createDrain({ name: 'inject-patch', endpoint: `${receiver.url}/inject`, headers: [{ name: 'X-Drain-Token', value: 'token-0123456789' }] });
    expect(ok.status).toBe(201);
    const patched = await app.request('PATCH', `${ORG}/${ok.body.id}`, { token: T, body: { headers: [header] } });
    expect(patched.status).toBe(400);
    expect(patched.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field });
    // The refused PATCH changed nothing.
    expect((await app.request('GET', `${ORG}/${ok.body.id}`, { token: T })).body.headers).toEqual([{ name: 'X-Drain-Token', last4: '6789' }]);
  });

  it('refuses more than 10 headers at create and at PATCH, even a thousand', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `X-H${i}`, value: 'value-0123' }));
    for (const n of [11, 1000]) {
      const res = await createDrain({ name: `many-${n}`, endpoint: `${receiver.url}/inject`, headers: many(n) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'headers' });
    }
    const ok = await createDrain({ name: 'ten', endpoint: `${receiver.url}/inject`, headers: many(10) });
    expect(ok.status).toBe(201);
    const patched = await app.request('PATCH', `${ORG}/${ok.body.id}`, { token: T, body: { headers: many(1000) } });
    expect(patched.status).toBe(400);
    expect(patched.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'headers' });
  });

  it('delivers record fields holding CR/LF inside the body and never as headers', async () => {
    const crlf = '\r\nX-Injected: from-record\r\n\r\n';
    const id = await ctx.verifiedDrain({ name: 'fields', endpoint: `${receiver.url}/fields`, format: 'json', headers: [{ name: 'X-Drain-Token', value: 'token-0123456789' }] });
    const sent = record({
      agentName: `bot${crlf}`, agentVersion: `4${crlf}`, executionId: `exe${crlf}`, message: `hello${crlf}world`,
      attributes: { [`key${crlf}`]: `value${crlf}`, plain: 'x' },
    });
    await ingest(app, [sent]);
    const got = await waitFor(() => receiver.batches().find((r) => r.path === '/fields'), { what: 'the batch' });

    for (const [name, value] of Object.entries(got.headers)) {
      expect(DELIVERY_HEADERS.has(name), `unexpected header ${name}`).toBe(true);
      expect(String(value)).not.toMatch(/injected|from-record/i);
    }
    expect(got.headers['x-drain-token']).toBe('token-0123456789');
    // The raw request body holds the characters JSON-escaped; the decoded record holds them intact.
    expect(got.body.toString()).not.toContain('\r\n');
    const batch = parseBatch(got);
    expect(batch.resource['service.name']).toBe(`bot${crlf}`);
    const [delivered] = batch.records;
    expect(delivered).toMatchObject({ id: sent.id, body: `hello${crlf}world` });
    expect((delivered!.attributes as Record<string, unknown>)[`key${crlf}`]).toBe(`value${crlf}`);
    const row = await waitFor(async () => (await app.request('GET', `${ORG}/${id}/deliveries?kind=batch`, { token: T })).body.deliveries[0], { what: 'the delivery record' });
    expect(row).toMatchObject({ ok: true, recordCount: 1, statusCode: 200 });
  });

  describe('request headers on the REST listener (raw socket)', () => {
    const get = (headers: string) => `GET ${ORG} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${T}\r\n${headers}\r\n`;

    it.each([
      ['one 20 KB header', `X-Big: ${'a'.repeat(20_000)}\r\n`, 431],
      ['5,000 headers', Array.from({ length: 5000 }, (_, i) => `X-H${i}: v\r\n`).join(''), 431],
      ['a header value with a bare CR', 'X-A: b\rX-Injected: 1\r\n', 400],
      ['a header value with NUL', 'X-A: b\u0000c\r\n', 400],
      ['a header name with a space', 'X A: b\r\n', 400],
      ['a header line without a colon', 'X-Injected\r\n', 400],
      ['an obsolete folded header line', 'X-A: b\r\n continued\r\n', 400],
      ['both Content-Length and Transfer-Encoding (request smuggling)', 'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n', 400],
      ['two different Content-Length values', 'Content-Length: 1\r\nContent-Length: 2\r\n', 400],
    ])('answers %s with %s, never 5xx', async (_what, headers, status) => {
      const { status: got, answer } = await rawRequest(app.port, get(headers));
      expect(got).toBe(status);
      expect(answer).not.toMatch(/\bat [^\n]*:\d+:\d+|node_modules|\/src\//);
    });

    it('serves a request with 1,000 small headers (under the size limit) normally', async () => {
      const { status, answer } = await rawRequest(app.port, get(Array.from({ length: 1000 }, (_, i) => `X-H${i}: v\r\n`).join('')));
      expect(status).toBe(200);
      expect(answer).toContain('"drains"');
    });

    it('answers a malformed Authorization header 401 with the spec body (DEL is refused by the HTTP parser: 400)', async () => {
      const del = await rawRequest(app.port, `GET ${ORG} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${T}\u007f\r\n\r\n`);
      expect(del.status).toBe(400);
      for (const auth of ['Bearer \u00e9\u00e9', 'Bearer two tokens', `Bearer ${'k'.repeat(10_000)}`, 'Basic dXNlcjpwdw==']) {
        const { status, answer } = await rawRequest(app.port, Buffer.from(`GET ${ORG} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\n\r\n`, 'latin1'));
        expect(status, auth.slice(0, 30)).toBe(401);
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      }
    });
  });

  it.each([
    ['the ingest route without a credential', 'POST /internal/records', '', 401],
    ['the ingest route with a key lacking logs:ingest', 'POST /internal/records', `Authorization: Bearer ${T}\r\n`, 403],
    ['a drain create without a credential', `POST ${ORG}`, '', 401],
    ['a drain PATCH with a revoked key', `PATCH ${ORG}/drn_x`, 'Authorization: Bearer lk_acme_revoked\r\n', 401],
  ])('answers %s once, before the body arrives, and closes the connection', async (_what, line, auth, status) => {
    const socket = connect(app.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // Headers and the start of a body of 100,000 bytes; the rest never comes.
    socket.write(`${line} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n[{"partial":`);
    // Held open, the connection would last the request time limit (5 minutes): the test's timeout ends it first.
    await closed;
    const answer = Buffer.concat(chunks).toString('latin1');
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual([`HTTP/1.1 ${status}`]);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
  }, 20_000);

  it('never reflects request input raw into a response header', async () => {
    await ingest(app, records(3, { agentId: 'agt_support' }));
    const path = '/admin/orgs/org_acme/logs';
    await waitFor(async () => (await app.request('GET', `${path}?limit=1`, { token: 'lk_acme_wild' })).body.pagination?.totalCount >= 3, { what: 'stored logs' });
    const res = await app.request('GET', `${path}?page=1&limit=1&extra=${encodeURIComponent('x\r\nX-Injected: 1')}`, { token: 'lk_acme_wild' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-injected')).toBeNull();
    const link = res.headers.get('link')!;
    expect(link).toMatch(/^<\/admin\/orgs\/org_acme\/logs\?.*cursor=.*>; rel="next"$/);
    expect(link).toContain('extra=x%0D%0AX-Injected%3A+1');
  });
});
