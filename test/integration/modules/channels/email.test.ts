/**
 * Email (spec 03 part 4.2, contract C11, C16): the SMTP adapter against a
 * local SMTP server, checked on the MIME message it receives (parts, subject
 * rules, cc and bcc, In-Reply-To and References, attachments, the
 * Message-ID as the send's messageId, a refusal as a failed delivery); and
 * attachments fetched server-side: 28 MiB in total accepted, one byte more
 * refused, private and loopback addresses refused, redirects to them
 * refused, a slow server bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from '../../../helpers/app.js';
import { writeChannelsSeed } from '../../../helpers/channels-seed.js';
import { startReceiver } from '../../../helpers/receiver.js';
import type { HttpsReceiver } from '../../../../src/devtools/https-receiver.js';

interface Received { from: string; rcpt: string[]; raw: Buffer; parsed: ParsedMail }

let smtp: SMTPServer;
const received: Received[] = [];
let files: HttpsReceiver;
let app: TestApp;
let sandboxApp: TestApp;
const MiB = 1024 * 1024;
const BASE = '/developer/agents/agt_support/channels';
const email = (body: unknown, on: TestApp = app) => on.request('POST', `${BASE}/email/send`, { token: 'lk_send', body });

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
    onRcptTo(address, _session, cb) {
      if (address.address === 'refuse@example.com') return cb(Object.assign(new Error('5.1.1 mailbox unavailable'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        void simpleParser(raw).then((parsed) => {
          received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', rcpt: session.envelope.rcptTo.map((r) => r.address), raw, parsed });
          cb();
        });
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  files = await startReceiver();
  const payload = (n: number) => Buffer.alloc(n, 0x61);
  files.respondWith((req, res) => {
    const u = new URL(req.path, 'https://localhost');
    const size = Number(u.searchParams.get('size') ?? '0');
    if (u.pathname === '/file') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(payload(size));
    // No Content-Length: the limit must hold while reading.
    if (u.pathname === '/chunked') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' });
      const chunk = payload(MiB);
      let left = size;
      while (left > 0) {
        const n = Math.min(left, MiB);
        res.write(n === MiB ? chunk : payload(n));
        left -= n;
      }
      return void res.end();
    }
    if (u.pathname === '/redirect') return void res.writeHead(302, { location: u.searchParams.get('to')! }).end();
    if (u.pathname === '/slow') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('x'), 200);
      res.on('close', () => clearInterval(t));
      return true;
    }
    if (u.pathname === '/missing') return void res.writeHead(404).end('no');
    return void res.writeHead(200, { 'content-type': 'text/plain' }).end('hello attachment');
  });
  const common = { SEED_FILE: writeChannelsSeed(), ATTACHMENT_FETCH_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: files.caPath };
  // The SMTP app bounds fetches tightly (the slow-server test); the sandbox one has room for 28 MiB on a loaded machine.
  app = await startApp({ ...common, EMAIL_SMTP_URL: `smtp://127.0.0.1:${port}`, EMAIL_FROM: 'Support <support@acme.test>', ATTACHMENT_FETCH_TIMEOUT_MS: '1500' });
  sandboxApp = await startApp({ ...common, ATTACHMENT_FETCH_TIMEOUT_MS: '30000' });
});
afterAll(async () => {
  await app?.stop();
  await sandboxApp?.stop();
  await files?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

const lastMail = () => received.at(-1)!;

describe('the SMTP adapter', () => {
  it('sends a text email: one text/plain part, the channel default subject, Message-ID as messageId', async () => {
    const r = await email({ to: { email: 'rcpt@example.com' }, text: 'Plain body' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const m = lastMail();
    expect(m.rcpt).toEqual(['rcpt@example.com']);
    expect(m.from).toBe('support@acme.test');
    expect(m.parsed.subject).toBe('Message from support-bot');
    expect(m.parsed.text?.trim()).toBe('Plain body');
    expect(m.parsed.html).toBe(false);
    expect(m.raw.toString()).toMatch(/^Content-Type: text\/plain/m);
    expect(r.body.messageId).toBe(m.parsed.messageId);
    const d = (await app.request('GET', `${BASE}/deliveries/${r.body.deliveryId}`, { token: 'lk_send' })).body.data;
    expect(d).toMatchObject({ provider: 'smtp', status: 'accepted', messageId: m.parsed.messageId });
  });

  it('sends html as is, richBody rendered into the branded template with a plain alternative', async () => {
    await email({ to: { email: 'rcpt@example.com' }, html: '<p id="own">Own <b>html</b></p>', subject: 'Html' });
    expect(lastMail().parsed.html).toContain('<p id="own">Own <b>html</b></p>');
    expect(lastMail().raw.toString()).not.toMatch(/text\/plain/);
    await email({ to: { email: 'rcpt@example.com' }, richBody: '# Your order\n\nIt **shipped**.\n:::button\n[Track](https://example.com/t)\n:::\n<script>x</script>', subject: 'Rich' });
    const m = lastMail();
    expect(m.raw.toString()).toMatch(/multipart\/alternative/);
    const html = m.parsed.html as string;
    expect(html).toContain('<h1>Your order</h1>');
    expect(html).toContain('<strong>shipped</strong>');
    expect(html).toContain('lua-component lua-component-button');
    expect(html).toContain('href="https://example.com/t"');
    expect(html).toContain('lua-brand-header');
    expect(html).not.toContain('<script>');
    expect(m.parsed.text).toContain('It **shipped**.');
    expect(m.parsed.text).not.toContain(':::');
  });

  it('sends no Subject header for an explicit empty subject', async () => {
    await email({ to: { email: 'rcpt@example.com' }, text: 'no subject', subject: '' });
    expect(lastMail().parsed.headers.has('subject')).toBe(false);
    expect(lastMail().raw.toString()).not.toMatch(/^Subject:/im);
  });

  it('carries cc in the header, bcc in the envelope only, and the reply headers with angle brackets added', async () => {
    await email({
      to: { userId: 'usr_mail' }, text: 'reply', subject: 'Re: question', cc: ['cc1@example.com', 'cc2@example.com'], bcc: ['hidden@example.com'],
      inReplyTo: 'orig-1@mail.example.com', references: ['<root@mail.example.com>', 'orig-1@mail.example.com'],
    });
    const m = lastMail();
    expect(m.rcpt.sort()).toEqual(['cc1@example.com', 'cc2@example.com', 'hidden@example.com', 'mail.user@example.com']);
    expect((m.parsed.cc as { value: { address: string }[] }).value.map((a) => a.address)).toEqual(['cc1@example.com', 'cc2@example.com']);
    expect(m.parsed.bcc).toBeUndefined();
    expect(m.raw.toString()).not.toContain('hidden@example.com');
    expect(m.parsed.inReplyTo).toBe('<orig-1@mail.example.com>');
    expect(m.parsed.references).toEqual(['<root@mail.example.com>', '<orig-1@mail.example.com>']);
  });

  it('attaches fetched files as MIME parts', async () => {
    const r = await email({ to: { email: 'rcpt@example.com' }, text: 'see attached', attachments: [{ filename: 'note.txt', contentType: 'text/plain', url: `${files.url}/note` }, { filename: 'data.bin', contentType: 'application/octet-stream', url: `${files.url}/file?size=1000` }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const m = lastMail();
    expect(m.raw.toString()).toMatch(/multipart\/mixed/);
    expect(m.parsed.attachments.map((a) => [a.filename, a.contentType, a.size])).toEqual([['note.txt', 'text/plain', 16], ['data.bin', 'application/octet-stream', 1000]]);
    expect(m.parsed.attachments[0]!.content.toString()).toBe('hello attachment');
  });

  it('records an SMTP refusal as a failed delivery with a failure object', async () => {
    const r = await email({ to: { email: 'refuse@example.com' }, text: 'x' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'failed', delivered: false, messageId: null });
    const d = (await app.request('GET', `${BASE}/deliveries/${r.body.deliveryId}`, { token: 'lk_send' })).body.data;
    expect(d.failure).toMatchObject({ category: 'invalid_request', owner: 'customer', provider: 'smtp', code: '550', retryable: false });
    expect(d.history).toEqual([{ status: 'failed', at: expect.any(String), source: 'send' }]);
  });
});

describe('attachments', () => {
  const attach = (...urls: string[]) => email({ to: { email: 'rcpt@example.com' }, text: 'x', attachments: urls.map((url, i) => ({ filename: `f${i}.bin`, contentType: 'application/octet-stream', url })) }, sandboxApp);
  const expectRefused = async (p: ReturnType<typeof attach>, message: string | RegExp) => {
    const r = await p;
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.statusCode).toBe(400);
    if (typeof message === 'string') expect(r.body.message).toBe(message);
    else expect(r.body.message).toMatch(message);
  };

  it('accepts exactly 28 MiB in total, and refuses one byte more, counted while reading', async () => {
    const half = 14 * MiB;
    const ok = await attach(`${files.url}/file?size=${half}`, `${files.url}/chunked?size=${half}`);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    await expectRefused(attach(`${files.url}/file?size=${half}`, `${files.url}/chunked?size=${half + 1}`), 'Attachments exceed the 28MB limit');
    await expectRefused(attach(`${files.url}/chunked?size=${28 * MiB + 1}`), 'Attachments exceed the 28MB limit');
  });

  it('refuses private, loopback, link-local and metadata addresses, and plain http', async () => {
    const port = new URL(files.url).port;
    for (const url of [`https://127.0.0.1:${port}/note`, 'https://10.1.2.3/x', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/x', 'https://192.168.0.10/x', `http://localhost:${port}/note`]) {
      await expectRefused(attach(url), /^Attachment f0\.bin could not be fetched: /);
    }
  });

  it('checks every redirect hop: a redirect to a loopback or private address is refused, to an allowed host followed', async () => {
    const port = new URL(files.url).port;
    await expectRefused(attach(`${files.url}/redirect?to=${encodeURIComponent(`https://127.0.0.1:${port}/note`)}`), /loopback/);
    await expectRefused(attach(`${files.url}/redirect?to=${encodeURIComponent('https://10.0.0.7/x')}`), /private/);
    await expectRefused(attach(`${files.url}/redirect?to=${encodeURIComponent(`http://localhost:${port}/note`)}`), /https/);
    const followed = await attach(`${files.url}/redirect?to=${encodeURIComponent(`${files.url}/note`)}`);
    expect(followed.status).toBe(200);
  });

  it('bounds a slow server by the fetch time limit, and refuses a non-2xx answer', async () => {
    const started = Date.now();
    const slow = await email({ to: { email: 'rcpt@example.com' }, text: 'x', attachments: [{ filename: 'slow.txt', contentType: 'text/plain', url: `${files.url}/slow` }] });
    expect(slow.status).toBe(400);
    expect(slow.body.message).toBe('Attachment slow.txt could not be fetched: the fetch took too long');
    expect(Date.now() - started).toBeLessThan(10_000);
    await expectRefused(attach(`${files.url}/missing`), /answered 404/);
  });
});
