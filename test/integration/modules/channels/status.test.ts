/**
 * Delivery statuses (spec 03 parts 3 and 6, contract C10, C15): the sandbox
 * receipts, the receipt route (authenticated, once per vendor event id), the
 * queued send that goes out when the end user writes again, the sweep that
 * expires what waited too long, and X-Idempotency-Key with its race.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../../helpers/app.js';
import { writeChannelsSeed } from '../../../helpers/channels-seed.js';
import { createChannelService } from '../../../../src/modules/channels/service.js';
import { createVendors } from '../../../../src/vendors/index.js';
import { loadConfig } from '../../../../src/config/config.js';
import { createLogger } from '../../../../src/telemetry/logger.js';

let app: TestApp;
const BASE = '/developer/agents/agt_support/channels';
const send = (body: unknown, headers: Record<string, string> = {}) => app.request('POST', `${BASE}/send`, { token: 'lk_send', body, headers });
const read = async (id: string) => (await app.request('GET', `${BASE}/deliveries/${id}`, { token: 'lk_send' })).body.data;
const receipt = (body: unknown, token = 'lk_receipts') => app.request('POST', '/developer/channels/receipts', { token, body });
const count = async () => (await app.request('GET', `${BASE}/deliveries?limit=200`, { token: 'lk_send' })).body.data.length as number;

beforeAll(async () => {
  app = await startApp({ SEED_FILE: writeChannelsSeed(), SANDBOX_RECEIPT_STEP_MS: '50', CHANNEL_SWEEP_INTERVAL_MS: '0' });
});
afterAll(async () => {
  await app?.stop();
});

describe('sandbox receipts', () => {
  it('moves a number ending in 7777 through sent, delivered and read, each a callback history entry', async () => {
    const r = await send({ channel: 'sms', to: { phoneNumber: '+15550007777' }, text: 'track me' });
    expect(r.body.status).toBe('accepted');
    const d = await waitFor(async () => {
      const x = await read(r.body.deliveryId);
      return x.status === 'read' ? x : undefined;
    }, { what: 'the read receipt' });
    expect(d.history.map((h: any) => [h.status, h.source])).toEqual([['accepted', 'send'], ['sent', 'callback'], ['delivered', 'callback'], ['read', 'callback']]);
    expect(d.failure).toBeNull();
  });

  it('fails a number ending in 9999 with the unreachable failure object; failed is terminal', async () => {
    const r = await send({ channel: 'chatapp', to: { phoneNumber: '+15550009999' }, text: 'x' });
    // A cold chat-app number has a closed window: the template opens it and is sent at once.
    const t = await app.request('POST', `${BASE}/chatapp/template`, { token: 'lk_send', body: { to: { phoneNumber: '+15550009999' }, templateName: 'hello' } });
    expect(r.body.status).toBe('queued');
    const d = await waitFor(async () => {
      const x = await read(t.body.deliveryId);
      return x.status === 'failed' ? x : undefined;
    }, { what: 'the failed receipt' });
    expect(d.failure).toMatchObject({ category: 'unreachable', owner: 'recipient', retryable: false, provider: 'sandbox-chatapp' });
    expect(d.history.map((h: any) => [h.status, h.source])).toEqual([['accepted', 'send'], ['failed', 'callback']]);
    // A late receipt does not move a terminal delivery.
    const late = await receipt({ type: 'status', provider: 'sandbox-chatapp', eventId: 'late-1', messageId: d.messageId, status: 'delivered' });
    expect(late.body).toMatchObject({ duplicate: false, deliveryId: d.id, status: 'failed' });
    expect((await read(d.id)).history).toHaveLength(2);
  });

  it('leaves every other recipient accepted', async () => {
    const r = await send({ channel: 'sms', to: { phoneNumber: '+15550001234' }, text: 'x' });
    await new Promise((res) => setTimeout(res, 300));
    expect((await read(r.body.deliveryId)).status).toBe('accepted');
  });
});

describe('the receipt route', () => {
  it('applies a vendor status receipt once per event id, forward only', async () => {
    const r = await send({ channel: 'sms', to: { phoneNumber: '+15550001235' }, text: 'x' });
    const { messageId, deliveryId } = r.body;
    const first = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'evt-1', messageId, status: 'delivered' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ eventId: 'evt-1', duplicate: false, deliveryId, status: 'delivered', flushed: [] });
    const again = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'evt-1', messageId, status: 'delivered' });
    expect(again.body).toMatchObject({ duplicate: true, deliveryId, status: 'delivered' });
    // Backwards (sent after delivered) changes nothing.
    await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'evt-2', messageId, status: 'sent' });
    const d = await read(deliveryId);
    expect(d.status).toBe('delivered');
    expect(d.history.map((h: any) => h.status)).toEqual(['accepted', 'delivered']);
    const failed = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'evt-3', messageId, status: 'failed', failure: { category: 'opted_out', title: 'Opted out', retryable: false, owner: 'recipient', code: '21610' } });
    expect(failed.body.status).toBe('failed');
    expect((await read(deliveryId)).failure).toMatchObject({ category: 'opted_out', provider: 'sandbox-sms', code: '21610', owner: 'recipient' });
  });

  it('is authenticated: without the scope 403, another organization\'s key touches nothing', async () => {
    const r = await send({ channel: 'sms', to: { phoneNumber: '+15550001236' }, text: 'x' });
    const denied = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'evt-x', messageId: r.body.messageId, status: 'read' }, 'lk_send');
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('INSUFFICIENT_SCOPE');
    expect((await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'evt-x', messageId: r.body.messageId, status: 'read' }, 'none')).status).toBe(401);
    const foreign = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'evt-y', messageId: r.body.messageId, status: 'read' }, 'lk_globex_send');
    expect(foreign.body).toMatchObject({ deliveryId: null, status: null });
    expect((await read(r.body.deliveryId)).status).toBe('accepted');
  });

  it('sends what was queued for a closed window when the end user writes again', async () => {
    const q = await send({ channel: 'chatapp', to: { userId: 'usr_uk' }, text: 'waiting for you' });
    expect(q.body.status).toBe('queued');
    const inbound = { type: 'inbound', provider: 'sandbox-chatapp', eventId: 'in-1', agentId: 'agt_support', userId: 'usr_uk', channel: 'chatapp', address: '+447700900123', messageId: 'wamid_new' };
    const r = await receipt(inbound);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.flushed).toContain(q.body.deliveryId);
    const d = await read(q.body.deliveryId);
    expect(d.status).toBe('accepted');
    expect(d.messageId).toEqual(expect.any(String));
    // The same record, now of origin queued_flush; the flush is a send, and its history entry names the origin.
    expect(d.id).toBe(q.body.deliveryId);
    expect(d.origin).toBe('queued_flush');
    expect(d.history).toEqual([
      { status: 'queued', at: expect.any(String), source: 'send' },
      { status: 'accepted', at: expect.any(String), source: 'send', origin: 'queued_flush' },
    ]);
    // The delivery list shows it as the read does.
    const listed = (await app.request('GET', `${BASE}/deliveries?limit=200`, { token: 'lk_send' })).body.data.find((x: any) => x.id === d.id);
    expect(listed).toEqual(d);
    // The same event again changes nothing; the window is open now.
    expect((await receipt(inbound)).body).toMatchObject({ duplicate: true, flushed: [] });
    expect((await send({ channel: 'chatapp', to: { userId: 'usr_uk' }, text: 'now live' })).body.status).toBe('accepted');
    // An agent of another organization is refused.
    expect((await receipt({ ...inbound, eventId: 'in-2', agentId: 'agt_globex' })).status).toBe(400);
  });
});

describe('vendor event ids, each organization\'s own', () => {
  const globexSend = (body: unknown) => app.request('POST', '/developer/agents/agt_globex/channels/send', { token: 'lk_globex_send', body });

  it('applies the same provider and event id once for each organization, a repeat within one is the duplicate', async () => {
    const acme = (await send({ channel: 'sms', to: { phoneNumber: '+15550001301' }, text: 'x' })).body;
    const globex = (await globexSend({ channel: 'sms', to: { phoneNumber: '+15550001302' }, text: 'x' })).body;
    const event = { type: 'status', provider: 'sandbox-sms', eventId: 'shared-evt-1', status: 'delivered' };
    const a = await receipt({ ...event, messageId: acme.messageId });
    expect(a.body).toEqual({ eventId: 'shared-evt-1', duplicate: false, deliveryId: acme.deliveryId, status: 'delivered', flushed: [] });
    const g = await receipt({ ...event, messageId: globex.messageId }, 'lk_globex_send');
    expect(g.body).toEqual({ eventId: 'shared-evt-1', duplicate: false, deliveryId: globex.deliveryId, status: 'delivered', flushed: [] });
    expect((await receipt({ ...event, messageId: globex.messageId }, 'lk_globex_send')).body).toMatchObject({ duplicate: true, deliveryId: globex.deliveryId });
    expect((await receipt({ ...event, messageId: acme.messageId })).body).toMatchObject({ duplicate: true, deliveryId: acme.deliveryId });
  });

  it('records the same inbound event id once for each organization', async () => {
    const inbound = { type: 'inbound', provider: 'sandbox-chatapp', eventId: 'shared-in-1', channel: 'chatapp', address: '+15550001303' };
    const a = await receipt({ ...inbound, agentId: 'agt_support', userId: 'usr_shared_a', messageId: 'wamid_shared_a' });
    expect(a.body).toMatchObject({ duplicate: false });
    const g = await receipt({ ...inbound, agentId: 'agt_globex', userId: 'usr_shared_g', messageId: 'wamid_shared_g' }, 'lk_globex_send');
    expect(g.status, JSON.stringify(g.body)).toBe(200);
    expect(g.body).toMatchObject({ duplicate: false });
    expect((await receipt({ ...inbound, agentId: 'agt_globex', userId: 'usr_shared_g', messageId: 'wamid_shared_g' }, 'lk_globex_send')).body).toMatchObject({ duplicate: true });
  });

  it('finds the delivery of the receipt\'s organization when another organization\'s has the same message id', async () => {
    const acme = (await send({ channel: 'sms', to: { phoneNumber: '+15550001304' }, text: 'x' })).body;
    const globex = (await globexSend({ channel: 'sms', to: { phoneNumber: '+15550001305' }, text: 'x' })).body;
    // Two vendor accounts may number their messages alike: the newer globex delivery takes acme's message id.
    await app.store.sql.query('update channel_deliveries set message_id = $1, created_at = now() + interval \'1 minute\' where id = $2', [acme.messageId, globex.deliveryId]);
    const r = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'same-msg-1', messageId: acme.messageId, status: 'delivered' });
    expect(r.body).toMatchObject({ duplicate: false, deliveryId: acme.deliveryId, status: 'delivered' });
    expect((await app.request('GET', `/developer/agents/agt_globex/channels/deliveries/${globex.deliveryId}`, { token: 'lk_globex_send' })).body.data.status).toBe('accepted');
  });

  it('sends nothing queued when a message already recorded arrives again under another event id', async () => {
    const first = { type: 'inbound', provider: 'sandbox-chatapp', eventId: 'again-1', agentId: 'agt_support', userId: 'usr_again', channel: 'chatapp', address: '+15550001306', messageId: 'wamid_again', receivedAt: new Date(Date.now() - 2 * 86_400_000).toISOString() };
    expect((await receipt(first)).body).toMatchObject({ duplicate: false, flushed: [] });
    // The message is two days old: the window is closed, the send waits for the user to write again.
    const q = await send({ channel: 'chatapp', to: { userId: 'usr_again' }, text: 'waiting' });
    expect(q.body.status).toBe('queued');
    expect((await receipt({ ...first, eventId: 'again-2' })).body).toMatchObject({ duplicate: false, flushed: [] });
    expect((await read(q.body.deliveryId)).status).toBe('queued');
  });
});

describe('the status sweep', () => {
  it('expires queued sends older than the queue expiry, with a sweep history entry', async () => {
    const q = await send({ channel: 'chatapp', to: { userId: 'usr_stale' }, text: 'will expire' });
    expect(q.body.status).toBe('queued');
    const config = loadConfig({ DATA_DIR: 'memory://' });
    const service = createChannelService({
      store: app.store, vendors: createVendors(config), logger: createLogger('silent', 'test'), queueExpiryMs: 7 * 86_400_000,
      fetchAttachments: async () => [],
    });
    // Not yet: a day later nothing has waited seven days.
    await service.sweep(new Date(Date.now() + 86_400_000));
    expect((await read(q.body.deliveryId)).status).toBe('queued');
    expect(await service.sweep(new Date(Date.now() + 8 * 86_400_000))).toBeGreaterThan(0);
    const d = await read(q.body.deliveryId);
    expect(d.status).toBe('expired');
    expect(d.history.at(-1)).toEqual({ status: 'expired', at: expect.any(String), source: 'sweep' });
    expect(d.failure).toMatchObject({ category: 'window_closed', retryable: false });
    // Terminal: the user writing again does not send it.
    const r = await receipt({ type: 'inbound', provider: 'sandbox-chatapp', eventId: 'in-stale', agentId: 'agt_support', userId: 'usr_stale', channel: 'chatapp', address: '+15550002222', messageId: 'wamid_stale_2' });
    expect(r.body.flushed).not.toContain(q.body.deliveryId);
    expect((await read(q.body.deliveryId)).status).toBe('expired');
  });
});

describe('X-Idempotency-Key', () => {
  it('replays the first send: same deliveryId, nothing sent or recorded again, status where the delivery stands now', async () => {
    const before = await count();
    const key = { 'x-idempotency-key': 'replay-key-1' };
    const first = await send({ channel: 'sms', to: { phoneNumber: '+15550017777' }, text: 'once' }, key);
    expect(first.body.status).toBe('accepted');
    await waitFor(async () => (await read(first.body.deliveryId)).status === 'read', { what: 'the read receipt' });
    expect(first.body).not.toHaveProperty('idempotentReplay');
    const replay = await send({ channel: 'sms', to: { phoneNumber: '+15550017777' }, text: 'once' }, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ ...first.body, status: 'read', idempotentReplay: true });
    expect(await count()).toBe(before + 1);
    expect((await read(first.body.deliveryId)).idempotencyKey).toBe('replay-key-1');
  });

  it('says a replay is one when the key comes back with a different message: that message is not sent', async () => {
    const before = await count();
    const key = { 'x-idempotency-key': 'other-body-key-1' };
    const first = await send({ channel: 'sms', to: { phoneNumber: '+15550001401' }, text: 'the first message' }, key);
    expect(first.status).toBe(200);
    expect(first.body).not.toHaveProperty('idempotentReplay');
    const other = await send({ channel: 'sms', to: { phoneNumber: '+15550001402' }, text: 'a different message' }, key);
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ ...first.body, idempotentReplay: true });
    expect(await count()).toBe(before + 1);
    expect((await read(first.body.deliveryId)).address).toBe('+15550001401');
  });

  it('is shared by the four send routes of the agent: any reuse answers the first send', async () => {
    const key = { 'x-idempotency-key': 'shared-key-1' };
    const first = await send({ channel: 'sms', to: { userId: 'usr_sms' }, text: 'a' }, key);
    const email = await app.request('POST', `${BASE}/email/send`, { token: 'lk_send', body: { to: { email: 'x@example.com' }, text: 'b' }, headers: key });
    expect(email.status).toBe(200);
    expect(email.body.deliveryId).toBe(first.body.deliveryId);
    expect(email.body.idempotentReplay).toBe(true);
    // Another agent's key space is its own.
    const other = await app.request('POST', '/developer/agents/agt_other/channels/email/send', { token: 'lk_send', body: { to: { email: 'x@example.com' }, text: 'b' }, headers: key });
    expect(other.status).toBe(200);
    expect(other.body.deliveryId).not.toBe(first.body.deliveryId);
  });

  it('sends once when two sends with one key race', async () => {
    const before = await count();
    const key = { 'x-idempotency-key': 'race-key-1' };
    const body = { channel: 'sms', to: { phoneNumber: '+15550008888' }, text: 'race' };
    const [a, b] = await Promise.all([send(body, key), send(body, key)]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(a.body.deliveryId).toBe(b.body.deliveryId);
    expect(await count()).toBe(before + 1);
  });

  it('does not keep the key of a refused send, and never deduplicates sends without the header', async () => {
    const key = { 'x-idempotency-key': 'refused-then-ok' };
    expect((await send({ channel: 'sms', to: { userId: 'usr_nobody' }, text: 'x' }, key)).status).toBe(400);
    expect((await send({ channel: 'sms', to: { userId: 'usr_sms' }, text: 'x' }, key)).status).toBe(200);
    const x = await send({ channel: 'sms', to: { userId: 'usr_sms' }, text: 'same' });
    const y = await send({ channel: 'sms', to: { userId: 'usr_sms' }, text: 'same' });
    expect(x.body.deliveryId).not.toBe(y.body.deliveryId);
    expect((await send({ channel: 'sms', to: { userId: 'usr_sms' }, text: 'x' }, { 'x-idempotency-key': '' })).status).toBe(400);
  });
});
