/**
 * Channel sends through HTTP (spec 03 part 4.2, contract C1-C14): every send
 * route, each rule of the recipient paragraph, the chat-app window, the
 * refusals (framework shape, nothing recorded), the delivery reads and their
 * filters, and the scope of part 5.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { writeChannelsSeed } from '../../../helpers/channels-seed.js';

let app: TestApi;
const BASE = '/developer/agents/agt_support/channels';
const send = (body: unknown, token = 'lk_send', headers: Record<string, string> = {}) => app.request('POST', `${BASE}/send`, { token, body, headers });
const deliveries = async (query = '') => (await app.request('GET', `${BASE}/deliveries${query}`, { token: 'lk_send' })).body.data as any[];

beforeAll(async () => {
  app = await startApi({ SEED_FILE: writeChannelsSeed() });
});
afterAll(async () => {
  await app?.stop();
});

/** A refusal: 400 in the framework shape, and no delivery recorded. */
async function expectRefused(res: Promise<{ status: number; body: any }>, message: string | RegExp): Promise<void> {
  const before = (await deliveries('?limit=200')).length;
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'statusCode']);
  expect(r.body.error).toBe('Bad Request');
  const text = Array.isArray(r.body.message) ? r.body.message.join('; ') : r.body.message;
  if (typeof message === 'string') expect(text).toContain(message);
  else expect(text).toMatch(message);
  expect((await deliveries('?limit=200')).length).toBe(before);
}

describe('POST .../send', () => {
  it('sends a chat-app text in a live window: accepted, delivered, recorded, with a delivery record', async () => {
    const r = await send({ channel: 'chatapp', to: { userId: 'usr_chat' }, text: 'Hello :::card\ntitle: x\n:::' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      deliveryId: expect.stringMatching(/^dlv_/), status: 'accepted', delivered: true, recorded: true, queuedForWindow: false,
      userId: 'usr_chat', address: '+15550001111', messageId: expect.any(String),
    });
    const read = await app.request('GET', `${BASE}/deliveries/${r.body.deliveryId}`, { token: 'lk_send' });
    expect(read.status).toBe(200);
    expect(read.body.success).toBe(true);
    expect(read.body.data).toMatchObject({
      id: r.body.deliveryId, agentId: 'agt_support', channel: 'chatapp', channelIdentifier: null, to: { userId: 'usr_chat' },
      userId: 'usr_chat', address: '+15550001111', provider: 'sandbox-chatapp', origin: 'channels_send', status: 'accepted',
      failure: null, messageId: r.body.messageId, template: null, idempotencyKey: null,
    });
    expect(read.body.data.history).toEqual([{ status: 'accepted', at: expect.any(String), source: 'send' }]);
    expect(new Date(read.body.data.createdAt).toISOString()).toBe(read.body.data.createdAt);
  });

  it('writes one audit entry per send, naming the delivery and never its text or address', async () => {
    const r = await send({ channel: 'chatapp', to: { userId: 'usr_chat' }, text: 'audited hello 7f3a' });
    expect(r.status).toBe(200);
    const entries = await app.store.sql.query<{ action: string; actor: unknown; target_type: string; details: Record<string, unknown> }>(
      'select action, actor, target_type, details from audit_log where target_id = $1', [r.body.deliveryId],
    );
    expect(entries).toEqual([{
      action: 'channels.message.sent', actor: { type: 'api_key', id: expect.stringMatching(/^key_/) }, target_type: 'channel_delivery',
      details: { agentId: 'agt_support', channel: 'chatapp', origin: 'channels_send', status: 'accepted' },
    }]);
    expect(JSON.stringify(entries)).not.toMatch(/audited hello|\+15550001111/);
  });

  it('pins a channel configuration with channelIdentifier', async () => {
    const r = await send({ channel: 'sms', to: { userId: 'usr_sms' }, text: 'pinned', options: { channelIdentifier: 'sms-line-2' } });
    expect(r.status).toBe(200);
    const read = await app.request('GET', `${BASE}/deliveries/${r.body.deliveryId}`, { token: 'lk_send' });
    expect(read.body.data).toMatchObject({ channelIdentifier: 'sms-line-2', from: 'sms-line-2', channel: 'sms' });
  });

  it('queues a chat-app text on a closed window by default, with a warning for a +1 number', async () => {
    const r = await send({ channel: 'chatapp', to: { userId: 'usr_stale' }, text: 'are you there?' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'queued', queuedForWindow: true, delivered: false, recorded: true, address: '+15550002222', messageId: null });
    expect(r.body.warning).toMatch(/\+1/);
    const read = await app.request('GET', `${BASE}/deliveries/${r.body.deliveryId}`, { token: 'lk_send' });
    expect(read.body.data.history).toEqual([{ status: 'queued', at: expect.any(String), source: 'send' }]);
  });

  it('queues without a warning for a number outside +1, also with onClosedWindow queue said explicitly', async () => {
    const r = await send({ channel: 'chatapp', to: { userId: 'usr_uk' }, text: 'hi', options: { chatapp: { onClosedWindow: 'queue' } } });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('queued');
    expect(r.body).not.toHaveProperty('warning');
  });

  it('answers 400 on a closed window with onClosedWindow fail, and records nothing', async () => {
    await expectRefused(send({ channel: 'chatapp', to: { userId: 'usr_stale' }, text: 'x', options: { chatapp: { onClosedWindow: 'fail' } } }), 'window is closed');
  });

  it('refuses an onClosedWindow other than queue or fail', async () => {
    await expectRefused(send({ channel: 'chatapp', to: { userId: 'usr_chat' }, text: 'x', options: { chatapp: { onClosedWindow: 'drop' } } }), 'onClosedWindow must be queue or fail');
  });

  it('cold-starts chatapp and sms with a raw phoneNumber (a number nobody wrote from has a closed chat-app window)', async () => {
    const sms = await send({ channel: 'sms', to: { phoneNumber: '+15550005555' }, text: 'cold sms' });
    expect(sms.status).toBe(200);
    expect(sms.body).toMatchObject({ status: 'accepted', delivered: true, userId: null, address: '+15550005555' });
    const chat = await send({ channel: 'chatapp', to: { phoneNumber: '+15550005555' }, text: 'cold chat' });
    expect(chat.body).toMatchObject({ status: 'queued', queuedForWindow: true });
    // A number an end user wrote from is that user, with that user's window.
    const known = await send({ channel: 'chatapp', to: { phoneNumber: '+15550001111' }, text: 'known' });
    expect(known.body).toMatchObject({ status: 'accepted', userId: 'usr_chat' });
  });

  it('refuses a raw phoneNumber on every other channel', async () => {
    for (const channel of ['email', 'workchat', 'socialdm', 'socialmsg']) {
      await expectRefused(send({ channel, to: { phoneNumber: '+15550005555' }, text: 'x' }), 'phoneNumber cold-starts only chatapp and sms');
    }
    await expectRefused(send({ channel: 'webchat', to: { phoneNumber: '+15550005555' }, text: 'x' }), 'webchat requires a userId');
  });

  it('sends a raw email only on email', async () => {
    const ok = await send({ channel: 'email', to: { email: 'new@example.com' }, text: 'plain email' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'accepted', address: 'new@example.com', userId: null });
    for (const channel of ['sms', 'chatapp', 'socialdm']) {
      await expectRefused(send({ channel, to: { email: 'new@example.com' }, text: 'x' }), 'email reaches only the email channel');
    }
  });

  it('takes userId on every channel where the end user is reachable', async () => {
    const cases: [string, string, string][] = [
      ['chatapp', 'usr_chat', '+15550001111'], ['sms', 'usr_sms', '+15550003333'], ['email', 'usr_mail', 'mail.user@example.com'],
      ['webchat', 'usr_web', 'web_1'], ['workchat', 'usr_work', 'W123'], ['socialdm', 'usr_dm', 'dm_1'], ['socialmsg', 'usr_msg', 'sm_1'],
    ];
    for (const [channel, userId, address] of cases) {
      const r = await send({ channel, to: { userId }, text: 'hi' });
      expect(r.status, `${channel}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body).toMatchObject({ status: 'accepted', userId, address, recorded: true });
    }
  });

  it('keeps workchat, socialdm and socialmsg warm-only: an end user who has not written there is refused', async () => {
    for (const channel of ['workchat', 'socialdm', 'socialmsg']) {
      await expectRefused(send({ channel, to: { userId: 'usr_chat' }, text: 'x' }), `${channel} is warm-only`);
    }
  });

  it('addresses workchat by conversationId, not recorded to memory; conversationId is workchat only', async () => {
    const r = await send({ channel: 'workchat', to: { conversationId: 'conv_1' }, text: 'to the room' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'accepted', recorded: false, address: 'conv_1', userId: null });
    for (const channel of ['socialdm', 'sms', 'email']) {
      await expectRefused(send({ channel, to: { conversationId: 'conv_1' }, text: 'x' }), 'conversationId addresses only workchat');
    }
    await expectRefused(send({ channel: 'workchat', to: { conversationId: 'conv_nope' }, text: 'x' }), 'Unknown conversationId conv_nope');
  });

  it('requires userId on webchat', async () => {
    await expectRefused(send({ channel: 'webchat', to: { email: 'a@example.com' }, text: 'x' }), 'webchat requires a userId');
    await expectRefused(send({ channel: 'webchat', to: { conversationId: 'conv_1' }, text: 'x' }), 'webchat requires a userId');
  });

  it('refuses a userId unknown to the agent, and one with no address on the channel', async () => {
    await expectRefused(send({ channel: 'sms', to: { userId: 'usr_nobody' }, text: 'x' }), 'Unknown userId usr_nobody');
    await expectRefused(send({ channel: 'sms', to: { userId: 'usr_web' }, text: 'x' }), 'has no sms address');
  });

  it('refuses a recipient without exactly one of the four fields, a missing or unknown channel, a missing text', async () => {
    await expectRefused(send({ channel: 'sms', to: { userId: 'usr_sms', phoneNumber: '+15550003333' }, text: 'x' }), 'to must hold exactly one of userId, phoneNumber, email, conversationId');
    await expectRefused(send({ channel: 'sms', to: {}, text: 'x' }), 'to must hold exactly one of userId, phoneNumber, email, conversationId');
    await expectRefused(send({ channel: 'sms', to: { handle: 'x' }, text: 'x' }), 'to must hold exactly one');
    await expectRefused(send({ channel: 'sms', text: 'x' }), 'to is required');
    await expectRefused(send({ to: { userId: 'usr_sms' }, text: 'x' }), 'channel is required');
    await expectRefused(send({ channel: 'fax', to: { userId: 'usr_sms' }, text: 'x' }), 'channel must be one of chatapp, sms, email, webchat, workchat, socialdm, socialmsg');
    await expectRefused(send({ channel: 'sms', to: { userId: 'usr_sms' } }), 'text is required');
    // Every failed rule is listed.
    const r = await send({ channel: 'fax', to: {} });
    expect(r.body.message).toEqual(expect.arrayContaining(['text is required', expect.stringContaining('channel must be one of')]));
  });
});

describe('POST .../chatapp/template', () => {
  const template = (body: unknown) => app.request('POST', `${BASE}/chatapp/template`, { token: 'lk_send', body });

  it('opens a conversation outside the window, by userId with a conversation or by phoneNumber', async () => {
    const stale = await template({ to: { userId: 'usr_stale' }, templateName: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'A1' }] }] });
    expect(stale.status).toBe(200);
    expect(stale.body).toMatchObject({ status: 'accepted', delivered: true, queuedForWindow: false, address: '+15550002222' });
    const read = await app.request('GET', `${BASE}/deliveries/${stale.body.deliveryId}`, { token: 'lk_send' });
    expect(read.body.data).toMatchObject({ template: 'order_update', channel: 'chatapp' });
    const cold = await template({ to: { phoneNumber: '+15550006666' }, templateName: 'welcome' });
    expect(cold.body).toMatchObject({ status: 'accepted', address: '+15550006666' });
  });

  it('refuses a userId with no chat-app conversation, a to other than userId or phoneNumber, a missing templateName', async () => {
    await expectRefused(template({ to: { userId: 'usr_web' }, templateName: 't' }), 'has no chat-app conversation');
    await expectRefused(template({ to: { email: 'a@example.com' }, templateName: 't' }), 'A template goes to a userId or a phoneNumber');
    await expectRefused(template({ to: { conversationId: 'conv_1' }, templateName: 't' }), 'A template goes to a userId or a phoneNumber');
    await expectRefused(template({ to: { userId: 'usr_chat' } }), 'templateName is required');
  });
});

describe('POST .../chatapp/reaction', () => {
  const react = (body: unknown) => app.request('POST', `${BASE}/chatapp/reaction`, { token: 'lk_send', body });

  it('reacts with one emoji, removes with an empty string, on inbound or sent messages', async () => {
    const r = await react({ to: { userId: 'usr_chat' }, messageId: 'wamid_recent', emoji: '👍🏽' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status).toBe('accepted');
    expect((await react({ to: { userId: 'usr_chat' }, messageId: 'wamid_recent', emoji: '👨‍👩‍👧' })).status).toBe(200);
    expect((await react({ to: { userId: 'usr_chat' }, messageId: 'wamid_recent', emoji: '' })).status).toBe(200);
    const sent = await send({ channel: 'chatapp', to: { userId: 'usr_chat' }, text: 'react to me' });
    expect((await react({ to: { userId: 'usr_chat' }, messageId: sent.body.messageId, emoji: '❤️' })).status).toBe(200);
  });

  it('refuses more or less than one emoji, a message older than 30 days, an unknown message', async () => {
    await expectRefused(react({ to: { userId: 'usr_chat' }, messageId: 'wamid_recent', emoji: '👍👍' }), 'emoji must be a single emoji');
    await expectRefused(react({ to: { userId: 'usr_chat' }, messageId: 'wamid_recent', emoji: 'ok' }), 'emoji must be a single emoji');
    await expectRefused(react({ to: { userId: 'usr_old' }, messageId: 'wamid_old', emoji: '👍' }), 'Reactions are accepted on messages up to 30 days old');
    await expectRefused(react({ to: { userId: 'usr_chat' }, messageId: 'wamid_nope', emoji: '👍' }), 'Unknown messageId wamid_nope');
    await expectRefused(react({ to: { userId: 'usr_chat' }, emoji: '👍' }), 'messageId is required');
  });
});

describe('POST .../email/send', () => {
  const email = (body: unknown) => app.request('POST', `${BASE}/email/send`, { token: 'lk_send', body });

  it('sends text, html or richBody, to an email or a userId', async () => {
    for (const body of [{ text: 'plain' }, { html: '<p>hi</p>' }, { richBody: '# Hi\n:::button\n[Go](https://example.com)\n:::' }]) {
      const r = await email({ to: { email: 'someone@example.com' }, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ status: 'accepted', delivered: true, address: 'someone@example.com', messageId: expect.stringMatching(/^<.+@.+>$/) });
    }
    const byUser = await email({ to: { userId: 'usr_mail' }, text: 'hi', subject: 'Re: yours', cc: ['cc@example.com'], bcc: ['bcc@example.com'], inReplyTo: 'abc@mail.example.com', references: ['<r1@x.example>', 'abc@mail.example.com'] });
    expect(byUser.body).toMatchObject({ status: 'accepted', userId: 'usr_mail', address: 'mail.user@example.com' });
  });

  it('refuses none or more than one of text, html, richBody; a to other than email or userId', async () => {
    await expectRefused(email({ to: { email: 'a@example.com' } }), 'Send exactly one of text, html and richBody');
    await expectRefused(email({ to: { email: 'a@example.com' }, text: 'a', html: '<p>b</p>' }), 'Send exactly one of text, html and richBody');
    await expectRefused(email({ to: { phoneNumber: '+15550001111' }, text: 'a' }), 'phoneNumber cold-starts only chatapp and sms');
    await expectRefused(email({ to: { email: 'not-an-address' }, text: 'a' }), 'to.email must be an email address');
    await expectRefused(email({ to: { email: 'a@example.com' }, text: 'a', cc: ['nope'] }), 'cc[] must be an email address');
    await expectRefused(email({ to: { email: 'a@example.com' }, text: 'a', subject: 'two\nlines' }), 'subject must be one line');
  });
});

describe('GET .../deliveries', () => {
  it('lists newest first, filters by userId, status, channel and since, and bounds limit', async () => {
    const all = await deliveries('?limit=200');
    expect(all.length).toBeGreaterThan(10);
    const times = all.map((d) => Date.parse(d.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect((await deliveries('?limit=2')).map((d) => d.id)).toEqual(all.slice(0, 2).map((d) => d.id));
    expect((await deliveries()).length).toBe(Math.min(50, all.length));
    const queued = await deliveries('?status=queued');
    expect(queued.length).toBeGreaterThan(0);
    expect(queued.every((d) => d.status === 'queued')).toBe(true);
    const sms = await deliveries('?channel=sms');
    expect(sms.length).toBeGreaterThan(0);
    expect(sms.every((d) => d.channel === 'sms')).toBe(true);
    const mine = await deliveries('?userId=usr_chat');
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((d) => d.userId === 'usr_chat')).toBe(true);
    const pivot = all[3]!.createdAt;
    const since = await deliveries(`?since=${encodeURIComponent(pivot)}&limit=200`);
    expect(since.every((d) => d.createdAt >= pivot)).toBe(true);
    expect(since.length).toBe(all.filter((d) => d.createdAt >= pivot).length);
  });

  it('answers 400 on an invalid filter', async () => {
    for (const [query, rule] of [
      ['?limit=0', 'limit must be an integer from 1 to 200'], ['?limit=201', 'limit must be an integer from 1 to 200'], ['?limit=ten', 'limit must be an integer from 1 to 200'],
      ['?status=lost', 'status must be one of'], ['?channel=fax', 'channel must be one of'], ['?since=yesterday', 'since must be an ISO 8601 date-time'],
    ] as const) {
      const r = await app.request('GET', `${BASE}/deliveries${query}`, { token: 'lk_send' });
      expect(r.status, query).toBe(400);
      expect(r.body).toEqual({ statusCode: 400, error: 'Bad Request', message: [expect.stringContaining(rule)] });
    }
  });

  it('answers 404 with the spec message for a delivery that does not exist or is another agent\'s', async () => {
    const miss = await app.request('GET', `${BASE}/deliveries/dlv_missing`, { token: 'lk_send' });
    expect(miss.status).toBe(404);
    expect(miss.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'No delivery dlv_missing for agent agt_support' });
    const mine = (await deliveries())[0]!;
    const other = await app.request('GET', `/developer/agents/agt_other/channels/deliveries/${mine.id}`, { token: 'lk_send' });
    expect(other.body).toEqual({ statusCode: 404, error: 'Not Found', message: `No delivery ${mine.id} for agent agt_other` });
  });
});

describe('scopes (part 5, contract C5)', () => {
  const routes: [string, string, unknown?][] = [
    ['POST', `${BASE}/send`, { channel: 'sms', to: { userId: 'usr_sms' }, text: 'x' }],
    ['POST', `${BASE}/chatapp/template`, { to: { userId: 'usr_chat' }, templateName: 't' }],
    ['POST', `${BASE}/chatapp/reaction`, { to: { userId: 'usr_chat' }, messageId: 'wamid_recent', emoji: '👍' }],
    ['POST', `${BASE}/email/send`, { to: { email: 'a@example.com' }, text: 'x' }],
    ['GET', `${BASE}/deliveries`],
    ['GET', `${BASE}/deliveries/dlv_x`],
  ];

  it('answers 403 INSUFFICIENT_SCOPE without channels:send (*:read does not cover it) on all six routes', async () => {
    for (const [method, path, body] of routes) {
      const r = await app.request(method, path, { token: 'lk_read', ...(body ? { body } : {}) });
      expect(r.status, path).toBe(403);
      expect(r.body).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: 'channels:send', resourceType: 'agent', resourceId: 'agt_support' });
    }
  });

  it('grants channels:send through channels:*', async () => {
    expect((await app.request('GET', `${BASE}/deliveries`, { token: 'lk_wild' })).status).toBe(200);
  });

  it('answers 403 RESOURCE_NOT_PROJECTED for another organization\'s agent, a private one without a grant, and a nonexistent one', async () => {
    for (const [token, agent] of [['lk_globex_send', 'agt_support'], ['lk_send', 'agt_sales'], ['lk_send', 'agt_nope']]) {
      const r = await app.request('GET', `/developer/agents/${agent}/channels/deliveries`, { token });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', requiredScope: 'channels:send', resourceId: agent });
    }
  });

  it('answers 401 without a token', async () => {
    expect((await app.request('GET', `${BASE}/deliveries`)).status).toBe(401);
  });
});
