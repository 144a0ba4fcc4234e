/**
 * Run-end notifications and callbacks (contract W8; docs/api-workflows.md, notifications): each
 * mode sends once when a run ends (email to the creator through the mail vendor, here a local SMTP
 * server; the in-app record; a channel target and a callback as delivery records with origin
 * notification), a vendor's temporary refusal is tried again until sent, a refusal or a channel
 * that cannot be sent on is recorded, and none of it changes the run. Then the sender's guarantees,
 * with senders driven by the test on the API's store: two senders over one outbox send each
 * notification once; a notification whose run ended while no sender ran, or whose sender died
 * mid-send, is sent once by the next.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { until, startApp, type TestApp } from '../../../helpers/app.js';
import { WF_BASE, writeWorkflowsSeed } from '../../../helpers/workflows-seed.js';
import { createNotifier, type Notifier } from '../../../../src/modules/workflows/notifier.js';
import { createChannelNotifications } from '../../../../src/modules/index.js';
import { createVendors } from '../../../../src/vendors/index.js';
import { loadConfig } from '../../../../src/config/config.js';
import { createLogger } from '../../../../src/telemetry/logger.js';
import { createMetrics } from '../../../../src/telemetry/metrics.js';
import type { MailMessage, MailPort } from '../../../../src/vendors/mail/port.js';
import type { SendOutcome } from '../../../../src/vendors/messaging/port.js';

const CHANNELS = '/developer/agents/agt_support/channels';
const REPORT = { workflowName: 'nightly-report', input: { day: 'mon' } };

/** The workflow suites' seed, with end users who wrote to the agent (channels recipients) and the people the mail server treats apart. */
function writeSeed(): string {
  const path = writeWorkflowsSeed();
  const seed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, any[]>;
  const at = new Date(Date.now() - 3_600_000).toISOString();
  const inbound = (userId: string, channel: string, address: string, messageId: string, conversationId?: string) => ({
    agentId: 'agt_support', userId, channel, address, messageId, receivedAt: at, ...(conversationId ? { conversationId } : {}),
  });
  seed.users!.push(
    { id: 'usr_flaky', email: 'flaky@acme.test', memberships: [{ orgId: 'org_acme', role: 'member' }] },
    { id: 'usr_gone', email: 'gone@acme.test', memberships: [{ orgId: 'org_acme', role: 'member' }] },
  );
  seed.apiKeys!.push(
    { key: 'lk_wf_flaky', ownerId: 'usr_flaky', orgId: 'org_acme', scopes: ['workflows:*'], agentGrants: [], status: 'active' },
    { key: 'lk_wf_gone', ownerId: 'usr_gone', orgId: 'org_acme', scopes: ['workflows:*'], agentGrants: [], status: 'active' },
    { key: 'lk_ch_send', ownerId: 'usr_ann', orgId: 'org_acme', scopes: ['channels:send'], agentGrants: [], status: 'active' },
  );
  seed.inboundMessages = [
    inbound('usr_sms', 'sms', '+15550003333', 'sms_msg_1'),
    // The sandbox plays receipts to a number ending in 7777: sent, delivered, read.
    inbound('usr_read', 'sms', '+15550007777', 'sms_msg_2'),
    inbound('usr_web', 'webchat', 'web_1', 'web_msg_1'),
    inbound('usr_work', 'workchat', 'W123', 'wc_1', 'conv_1'),
  ];
  writeFileSync(path, JSON.stringify(seed));
  return path;
}


interface Received { rcpt: string[]; parsed: ParsedMail }

describe('run-end notifications', () => {
  let smtp: SMTPServer;
  const received: Received[] = [];
  /** RCPT TO refusals so far, by address. */
  const refusals = new Map<string, number>();
  let app: TestApp;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
      onRcptTo(address, _session, cb) {
        const n = refusals.get(address.address) ?? 0;
        // A mailbox that is busy for two tries (a temporary refusal), and one that does not exist.
        if (address.address === 'flaky@acme.test' && n < 2) {
          refusals.set(address.address, n + 1);
          return cb(Object.assign(new Error('4.2.1 mailbox busy, try again later'), { responseCode: 451 }));
        }
        if (address.address === 'gone@acme.test') {
          refusals.set(address.address, n + 1);
          return cb(Object.assign(new Error('5.1.1 mailbox unavailable'), { responseCode: 550 }));
        }
        cb();
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          void simpleParser(Buffer.concat(chunks)).then((parsed) => {
            received.push({ rcpt: session.envelope.rcptTo.map((r) => r.address), parsed });
            cb();
          });
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    app = await startApp({
      SEED_FILE: writeSeed(), EMAIL_SMTP_URL: `smtp://127.0.0.1:${port}`, EMAIL_FROM: 'Runs <runs@acme.test>',
      WORKFLOW_NOTIFY_RETRY_BASE_MS: '50', WORKFLOW_NOTIFY_RETRY_MAX_MS: '200', WORKFLOW_POLL_MS: '50',
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000',
    });
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  const start = async (body: Record<string, unknown>, token = 'lk_wf_all'): Promise<string> => {
    const res = await app.request('POST', `${WF_BASE}/runs`, { token, body });
    expect(res.status).toBe(202);
    return res.body.runId as string;
  };
  const full = async (runId: string, token = 'lk_wf_all') => (await app.request('GET', `${WF_BASE}/runs/${runId}?fields=full`, { token })).body;
  /** The run's detail once it ended and no notification of it is pending any more. */
  const settled = (runId: string, token = 'lk_wf_all') => until(`run ${runId} ended and its notifications settled`, async () => {
    const d = await full(runId, token);
    return d.completedAt !== null && (d.notifications as { status: string }[]).every((n) => n.status !== 'pending') ? d : undefined;
  });
  const mailsAbout = (runId: string) => received.filter((m) => (m.parsed.text ?? '').includes(runId));

  it('emailApp: one email to the creator with the run-end summary, and the in-app record', async () => {
    const runId = await start({ ...REPORT, notifyMode: 'emailApp' });
    const run = await settled(runId);
    expect(run.status).toBe('completed');
    expect(run.notifications).toEqual([
      { kind: 'email', channel: 'email', to: 'ann@acme.test', status: 'sent', attempts: 1 },
      { kind: 'app', channel: 'app', to: 'usr_ann', status: 'sent', attempts: 1 },
    ]);
    const mails = mailsAbout(runId);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.rcpt).toEqual(['ann@acme.test']);
    expect(mails[0]!.parsed.subject).toBe('Workflow run nightly-report completed');
    expect(mails[0]!.parsed.text).toContain('Steps: 2 completed');
  }, 30_000);

  it('app (the default): the in-app record only; off: nothing', async () => {
    const app1 = await start({ ...REPORT });
    expect((await settled(app1)).notifications).toEqual([{ kind: 'app', channel: 'app', to: 'usr_ann', status: 'sent', attempts: 1 }]);
    const off = await start({ ...REPORT, notifyMode: 'off' });
    expect((await settled(off)).notifications).toEqual([]);
    expect(mailsAbout(app1)).toHaveLength(0);
    expect(mailsAbout(off)).toHaveLength(0);
  }, 30_000);

  it('notifyTarget: the summary on that channel, a delivery record with origin notification', async () => {
    const runId = await start({ ...REPORT, notifyMode: 'off', notifyTarget: { channel: 'sms', threadId: 'usr_sms' } });
    const run = await settled(runId);
    expect(run.notifications).toEqual([{ kind: 'target', channel: 'sms', to: 'usr_sms', status: 'sent', attempts: 1, deliveryId: expect.stringMatching(/^dlv_/) }]);
    const deliveryId = run.notifications[0].deliveryId as string;
    const d = await app.request('GET', `${CHANNELS}/deliveries/${deliveryId}`, { token: 'lk_ch_send' });
    expect(d.status).toBe(200);
    expect(d.body.data).toMatchObject({ id: deliveryId, channel: 'sms', origin: 'notification', status: 'accepted', userId: 'usr_sms', address: '+15550003333', idempotencyKey: null });
    const list = await app.request('GET', `${CHANNELS}/deliveries?channel=sms`, { token: 'lk_ch_send' });
    expect((list.body.data as { id: string }[]).filter((x) => x.id === deliveryId)).toHaveLength(1);
  }, 30_000);

  it('a notification delivery moves on with its receipts, whichever process sent it', async () => {
    const run = await settled(await start({ ...REPORT, notifyMode: 'off', notifyTarget: { channel: 'sms', threadId: 'usr_read' } }));
    const deliveryId = run.notifications[0].deliveryId as string;
    const read = await until('the delivery to be read', async () => {
      const d = (await app.request('GET', `${CHANNELS}/deliveries/${deliveryId}`, { token: 'lk_ch_send' })).body.data;
      return d?.status === 'read' ? d : undefined;
    });
    expect(read.history.map((h: { status: string; source: string }) => [h.status, h.source])).toEqual([['accepted', 'send'], ['sent', 'callback'], ['delivered', 'callback'], ['read', 'callback']]);
  }, 30_000);

  it('callback: the summary to originThreadId on the thread\'s own channel (a conversation: workchat; an end user: where they wrote)', async () => {
    const conv = await settled(await start({ ...REPORT, notifyMode: 'off', callback: true, originThreadId: 'conv_1' }));
    expect(conv.notifications).toEqual([{ kind: 'callback', channel: 'workchat', to: 'conv_1', status: 'sent', attempts: 1, deliveryId: expect.stringMatching(/^dlv_/) }]);
    const web = await settled(await start({ ...REPORT, notifyMode: 'off', callback: true, originThreadId: 'usr_web' }));
    expect(web.notifications).toEqual([{ kind: 'callback', channel: 'webchat', to: 'usr_web', status: 'sent', attempts: 1, deliveryId: expect.stringMatching(/^dlv_/) }]);
    for (const r of [conv, web]) {
      const d = await app.request('GET', `${CHANNELS}/deliveries/${r.notifications[0].deliveryId as string}`, { token: 'lk_ch_send' });
      expect(d.body.data).toMatchObject({ origin: 'notification', channel: r.notifications[0].channel });
    }
    // An originThreadId without callback sends nothing.
    expect((await settled(await start({ ...REPORT, notifyMode: 'off', originThreadId: 'conv_1' }))).notifications).toEqual([]);
  }, 30_000);

  it('a vendor\'s temporary refusal is tried again with backoff until sent, once', async () => {
    const runId = await start({ ...REPORT, notifyMode: 'email' }, 'lk_wf_flaky');
    const run = await settled(runId, 'lk_wf_flaky');
    expect(run.status).toBe('completed');
    expect(run.notifications).toEqual([{ kind: 'email', channel: 'email', to: 'flaky@acme.test', status: 'sent', attempts: 3 }]);
    expect(refusals.get('flaky@acme.test')).toBe(2);
    expect(mailsAbout(runId)).toHaveLength(1);
  }, 30_000);

  it('records what cannot be sent and never changes the run: a refused mailbox, teamchat, an unknown thread, a customer principal', async () => {
    const gone = await settled(await start({ ...REPORT, notifyMode: 'email' }, 'lk_wf_gone'), 'lk_wf_gone');
    expect(gone.status).toBe('completed');
    expect(gone.notifications).toEqual([{ kind: 'email', channel: 'email', to: 'gone@acme.test', status: 'failed', attempts: 1, error: { code: '550', message: 'The mail server refused the message' } }]);

    const team = await settled(await start({ ...REPORT, notifyMode: 'off', notifyTarget: { channel: 'teamchat', threadId: 'T42' } }));
    expect(team.status).toBe('completed');
    expect(team.notifications).toEqual([{ kind: 'target', channel: 'teamchat', to: 'T42', status: 'skipped', attempts: 0, error: { code: 'channel_not_sendable', message: expect.any(String) } }]);

    const unknown = await settled(await start({ ...REPORT, notifyMode: 'off', notifyTarget: { channel: 'sms', threadId: 'usr_nobody' }, callback: true, originThreadId: 'thr_nowhere' }));
    expect(unknown.status).toBe('completed');
    expect(unknown.notifications).toEqual([
      { kind: 'target', channel: 'sms', to: 'usr_nobody', status: 'failed', attempts: 1, error: { code: 'recipient_refused', message: expect.stringContaining('usr_nobody') } },
      { kind: 'callback', channel: null, to: 'thr_nowhere', status: 'failed', attempts: 1, error: { code: 'recipient_refused', message: expect.stringContaining('thr_nowhere') } },
    ]);

    const customer = await settled(await start({ ...REPORT, notifyMode: 'emailApp', principal: { kind: 'customer', externalId: 'cus_9' } }));
    expect(customer.notifications).toEqual([
      { kind: 'email', channel: 'email', to: null, status: 'skipped', attempts: 0, error: { code: 'no_recipient', message: expect.any(String) } },
      { kind: 'app', channel: 'app', to: 'usr_ann', status: 'sent', attempts: 1 },
    ]);
  }, 60_000);

  it('notifies runs that end otherwise than completed: a parked step resolved fail, a cancel', async () => {
    const parked = async (): Promise<string> => {
      const runId = await start({ graph: { steps: [{ id: 'boom', kind: 'fail', code: 'BROKEN' }] }, notifyMode: 'email' });
      await until('the run to park', async () => ((await full(runId)).status === 'suspended' ? true : undefined));
      return runId;
    };
    const failed = await parked();
    const resolved = await app.request('POST', `${WF_BASE}/runs/${failed}/steps/boom/resolve`, { token: 'sess_ann', body: { outcome: 'fail' } });
    expect(resolved.status).toBe(200);
    const cancelled = await parked();
    const c = await app.request('POST', `${WF_BASE}/runs/${cancelled}/cancel`, { token: 'lk_wf_all', body: {} });
    expect(c.body.status).toBe('cancelled');
    for (const [runId, status] of [[failed, 'failed'], [cancelled, 'cancelled']] as const) {
      const run = await settled(runId);
      expect(run.status).toBe(status);
      expect(run.notifications).toEqual([{ kind: 'email', channel: 'email', to: 'ann@acme.test', status: 'sent', attempts: 1 }]);
      expect(mailsAbout(runId).map((m) => m.parsed.subject)).toEqual([`Workflow run an inline graph ${status}`]);
    }
    expect(mailsAbout(failed)[0]!.parsed.text).toContain('Error BROKEN at step boom');
  }, 30_000);

  it('lists notifications for the creator or an org:manage holder only, in the full detail', async () => {
    const runId = await start({ ...REPORT, notifyMode: 'app' }, 'lk_wf_max');
    const own = await settled(runId, 'lk_wf_max');
    expect(own.notifications).toEqual([{ kind: 'app', channel: 'app', to: 'usr_max', status: 'sent', attempts: 1 }]);
    // An organization admin's session holds org:manage.
    expect((await full(runId, 'sess_ann')).notifications).toEqual(own.notifications);
    expect(await full(runId, 'lk_wf_all')).not.toHaveProperty('notifications');
    const summary = (await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'lk_wf_max' })).body;
    expect(summary).not.toHaveProperty('notifications');
  }, 30_000);
});

/** A mail vendor the test controls: it records each send, and may fail or hang on cue. */
function fakeMail(behave: (m: MailMessage, call: number) => Promise<SendOutcome> | SendOutcome = () => ({ ok: true, provider: 'fake', messageId: '<x@fake>' })) {
  const calls: MailMessage[] = [];
  const sent: MailMessage[] = [];
  const port: MailPort = {
    async send(m) {
      calls.push(m);
      const out = await behave(m, calls.length);
      if (out.ok) sent.push(m);
      return out;
    },
    async close() {},
  };
  return { port, calls, sent };
}

describe('the notification sender', () => {
  let app: TestApp;
  const notifiers: Notifier[] = [];
  const logger = createLogger('silent');
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: writeSeed(), WORKFLOW_EXECUTOR: 'false', WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000' });
  }, 120_000);
  /** Each test's senders stop at its end: the next test's are the only ones running. */
  afterEach(async () => {
    for (const n of notifiers.splice(0)) await n.stop();
  });
  afterAll(async () => {
    await app?.stop();
  });

  const config = loadConfig({ DATA_DIR: 'memory://' });
  const channels = () => createChannelNotifications({ config, store: app.store, logger, vendors: createVendors(config), metrics: createMetrics('api').families });
  const notifier = (mail: MailPort, opts: { leaseMs?: number; retryBaseMs?: number } = {}): Notifier => {
    const n = createNotifier({
      store: app.store, logger, mail, channels: channels(), leaseMs: opts.leaseMs ?? 60_000, pollMs: 20,
      retryBaseMs: opts.retryBaseMs ?? 20, retryMaxMs: 100, maxAttempts: 5,
    });
    notifiers.push(n);
    return n;
  };
  /** A run ended with no executor: queued, then cancelled at once (its end writes its notifications). */
  const ended = async (body: Record<string, unknown>): Promise<string> => {
    const res = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { ...REPORT, ...body } });
    expect(res.status).toBe(202);
    const c = await app.request('POST', `${WF_BASE}/runs/${res.body.runId as string}/cancel`, { token: 'lk_wf_all', body: {} });
    expect(c.body.status).toBe('cancelled');
    return res.body.runId as string;
  };
  interface Row { id: string; run_id: string; kind: string; status: string; attempts: number; delivery_id: string | null; claimed_by: string | null }
  const rows = (runIds: string[]) =>
    app.store.sql.query<Row>('select id, run_id, kind, status, attempts, delivery_id, claimed_by from workflow_run_notifications where run_id = any($1::text[]) order by run_id, kind', [runIds]);
  const allSettled = (runIds: string[]) => until('every notification settled', async () => {
    const r = await rows(runIds);
    return r.length > 0 && r.every((x) => x.status !== 'pending') ? r : undefined;
  });
  const about = (mails: readonly MailMessage[], runId: string) => mails.filter((m) => (m.text ?? '').includes(runId));

  it('writes the outbox in the run\'s final transaction: pending until a sender runs, then sent once', async () => {
    const mail = fakeMail();
    // A sender that never ran (a process stopped between the run's end and the send).
    const first = notifier(mail.port);
    await first.stop();
    const runId = await ended({ notifyMode: 'emailApp' });
    const before = await rows([runId]);
    expect(before.map((r) => [r.kind, r.status, r.attempts])).toEqual([['app', 'sent', 1], ['email', 'pending', 0]]);
    expect(mail.calls).toHaveLength(0);
    notifier(mail.port).start();
    const after = await allSettled([runId]);
    expect(after.map((r) => [r.kind, r.status, r.attempts])).toEqual([['app', 'sent', 1], ['email', 'sent', 1]]);
    expect(about(mail.sent, runId)).toHaveLength(1);
    expect(about(mail.calls, runId)).toHaveLength(1);
  }, 30_000);

  it('a sender that died mid-send: the next sends it once its claim ran out, the run unchanged', async () => {
    const hanging = fakeMail(() => new Promise<SendOutcome>(() => {}));
    const dying = notifier(hanging.port, { leaseMs: 500 });
    dying.start();
    const runId = await ended({ notifyMode: 'email' });
    await until('the dying sender to take the email', async () => (about(hanging.calls, runId).length === 1 ? true : undefined));
    await dying.die();
    const [claimed] = (await rows([runId])).filter((r) => r.kind === 'email');
    expect(claimed).toMatchObject({ status: 'pending', claimed_by: expect.stringMatching(/^wfs_/) });
    const mail = fakeMail();
    const diedAt = Date.now();
    notifier(mail.port).start();
    const after = await allSettled([runId]);
    expect(after).toEqual([expect.objectContaining({ kind: 'email', status: 'sent', attempts: 1, claimed_by: null })]);
    // Not before the dead sender's claim ran out.
    expect(Date.now() - diedAt).toBeGreaterThanOrEqual(400);
    expect(about(mail.sent, runId)).toHaveLength(1);
    expect(about(hanging.sent, runId)).toHaveLength(0);
    expect((await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'lk_wf_all' })).body.status).toBe('cancelled');
  }, 30_000);

  it('two senders over one outbox send each notification once (emails and channel callbacks)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await ended({ notifyMode: 'email', callback: true, originThreadId: i % 2 === 0 ? 'conv_1' : 'usr_sms' }));
    // Both senders slow to send, so that each claims while the other's sends are under way.
    const slow = () => fakeMail(() => new Promise<SendOutcome>((res) => setTimeout(() => res({ ok: true, provider: 'fake', messageId: '<x@fake>' }), 15)));
    const a = slow();
    const b = slow();
    notifier(a.port).start();
    notifier(b.port).start();
    const after = await allSettled(ids);
    expect(after).toHaveLength(ids.length * 2);
    for (const r of after) expect([r.status, r.attempts]).toEqual(['sent', 1]);
    const sent = [...a.sent, ...b.sent];
    for (const id of ids) expect(about(sent, id)).toHaveLength(1);
    expect(a.calls.length + b.calls.length).toBe(ids.length);
    // One delivery record per callback, each the one its notification names.
    const deliveryIds = after.filter((r) => r.kind === 'callback').map((r) => r.delivery_id);
    const recorded = await app.store.sql.query<{ id: string }>("select id from channel_deliveries where origin = 'notification' and id = any($1::text[])", [deliveryIds]);
    expect(recorded).toHaveLength(ids.length);
  }, 60_000);

  it('a vendor failure is tried again after a backoff, then sent; past the attempt cap it is recorded failed; the run unchanged', async () => {
    const flaky = fakeMail((_m, call) => (call <= 2
      ? { ok: false, provider: 'fake', failure: { category: 'provider', code: '451', title: 'busy', detail: null, href: null, retryable: true, owner: 'vendor' } }
      : { ok: true, provider: 'fake', messageId: '<x@fake>' }));
    const n = notifier(flaky.port, { retryBaseMs: 100 });
    const runId = await ended({ notifyMode: 'email' });
    n.start();
    const [row] = await allSettled([runId]).then((r) => r.filter((x) => x.kind === 'email'));
    expect(row).toMatchObject({ status: 'sent', attempts: 3 });
    expect(flaky.calls).toHaveLength(3);
    expect(about(flaky.sent, runId)).toHaveLength(1);
    await n.stop();

    const down = fakeMail(() => ({ ok: false, provider: 'fake', failure: { category: 'provider', code: '421', title: 'down', detail: null, href: null, retryable: true, owner: 'vendor' } }));
    const m = notifier(down.port);
    const lost = await ended({ notifyMode: 'email' });
    m.start();
    const [failed] = (await allSettled([lost])).filter((x) => x.kind === 'email');
    expect(failed).toMatchObject({ status: 'failed', attempts: 5 });
    expect(down.calls).toHaveLength(5);
    const detail = (await app.request('GET', `${WF_BASE}/runs/${lost}?fields=full`, { token: 'lk_wf_all' })).body;
    expect(detail.status).toBe('cancelled');
    expect(detail.notifications).toEqual([{ kind: 'email', channel: 'email', to: 'ann@acme.test', status: 'failed', attempts: 5, error: { code: '421', message: 'down' } }]);
  }, 30_000);
});
