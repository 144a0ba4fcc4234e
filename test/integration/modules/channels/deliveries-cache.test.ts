/**
 * The deliveries list answers from the kernel's read cache (DELIVERIES_TOPIC): every writer of the
 * delivery records says so, so a write of each kind followed by a list answers the new state, at
 * once in the process that wrote (both stores), and in another API process on the same Postgres
 * database once its notification is heard (a cache whose age bound lies beyond the test, so that
 * only the notification can drop its entry). Without a listening connection (DRAIN_CONFIG_LISTEN
 * false) nothing is cached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../../helpers/app.js';
import { writeChannelsSeed } from '../../../helpers/channels-seed.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { startServeProcess } from '../../../helpers/serve-process.js';
import { twoApisOnOneDatabase } from '../../../helpers/two-apis.js';
import { createChannelService, DELIVERIES_TOPIC } from '../../../../src/modules/channels/service.js';
import { createChannelNotifications } from '../../../../src/modules/channels/notifications.js';
import { createVendors } from '../../../../src/vendors/index.js';
import { loadConfig } from '../../../../src/config/config.js';
import { createLogger } from '../../../../src/telemetry/logger.js';
import { topicEpoch } from '../../../../src/store/change-epochs.js';
import { Registry } from 'prom-client';
import { createFamilyMetrics } from '../../../../src/telemetry/family-metrics.js';

const BASE = '/developer/agents/agt_support/channels';
const LIST = `${BASE}/deliveries?limit=200`;
const TRIGGER = '/admin/agents/agt_support/channels/chatapp-line-1/chatapp-templates/order_update/trigger';
interface Listed { id: string; status: string; origin: string }

describe.each(['embedded', 'postgres'] as const)('the deliveries list after each kind of write, one API (%s)', (store) => {
  let db: TestDatabase | undefined;
  let app: TestApp;
  const request = (method: string, path: string, body?: unknown, token = 'lk_send') => app.request(method, path, { token, ...(body !== undefined ? { body } : {}) });
  const list = async (): Promise<Listed[]> => {
    const r = await request('GET', LIST);
    expect(r.status).toBe(200);
    return r.body.data as Listed[];
  };
  const statusIn = async (id: string) => (await list()).find((d) => d.id === id)?.status;
  const send = async (body: unknown) => {
    const r = await request('POST', `${BASE}/send`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { deliveryId: string; status: string; messageId: string };
  };
  /** A queued chat-app send (a cold number: the window is closed), listed before the test's write. */
  const queued = async (phoneNumber: string) => {
    const q = await send({ channel: 'chatapp', to: { phoneNumber }, text: 'queued' });
    expect(q.status).toBe('queued');
    expect(await statusIn(q.deliveryId)).toBe('queued');
    return q;
  };

  beforeAll(async () => {
    db = store === 'postgres' ? await createTestDatabase() : undefined;
    const env = { SEED_FILE: writeChannelsSeed(), SANDBOX_RECEIPT_STEP_MS: '50', CHANNEL_SWEEP_INTERVAL_MS: '0' };
    app = await startApp(db ? { ...env, DATABASE_URL: db.url } : env, 'serve');
  });
  afterAll(async () => {
    await app?.stop();
    await db?.drop();
  });

  it('a send', async () => {
    const before = await list();
    const s = await send({ channel: 'sms', to: { phoneNumber: '+15550005001' }, text: 'new' });
    expect((await list()).map((d) => d.id)).toEqual([s.deliveryId, ...before.map((d) => d.id)]);
  });

  it('the bulk template trigger', async () => {
    const before = (await list()).length;
    const r = await request('POST', TRIGGER, { recipients: [{ phoneNumber: '+15550005002' }, { phoneNumber: '+15550005003' }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const after = await list();
    expect(after).toHaveLength(before + 2);
    for (const { deliveryId } of r.body.results as { deliveryId: string }[]) expect(after.find((d) => d.id === deliveryId)?.origin).toBe('template');
  });

  it("a vendor's status receipt (the receipt route)", async () => {
    const s = await send({ channel: 'sms', to: { phoneNumber: '+15550005004' }, text: 'x' });
    expect(await statusIn(s.deliveryId)).toBe('accepted');
    const r = await request('POST', '/developer/channels/receipts', { type: 'status', provider: 'sandbox-sms', eventId: 'cache-evt-1', messageId: s.messageId, status: 'delivered' }, 'lk_receipts');
    expect(r.body).toMatchObject({ deliveryId: s.deliveryId, status: 'delivered' });
    expect(await statusIn(s.deliveryId)).toBe('delivered');
  });

  it("the sandbox vendor's receipts (heard by the process itself)", async () => {
    const s = await send({ channel: 'sms', to: { phoneNumber: '+15550057777' }, text: 'x' });
    expect(await statusIn(s.deliveryId)).toBe('accepted');
    // Each receipt's move committed before the single read (which no cache answers) shows it.
    for (const status of ['sent', 'delivered', 'read']) {
      await waitFor(async () => (await request('GET', `${BASE}/deliveries/${s.deliveryId}`)).body.data.status === status || undefined, { what: status });
      expect(['sent', 'delivered', 'read'].indexOf((await statusIn(s.deliveryId))!)).toBeGreaterThanOrEqual(['sent', 'delivered', 'read'].indexOf(status));
    }
  });

  it("a queued send's flush (the end user writes again)", async () => {
    const q = await queued('+15550005005');
    const r = await request('POST', '/developer/channels/receipts', {
      type: 'inbound', provider: 'sandbox-chatapp', eventId: 'cache-in-1', agentId: 'agt_support', userId: 'usr_cache_flush', channel: 'chatapp', address: '+15550005005', messageId: 'wamid_cache_flush',
    }, 'lk_receipts');
    expect(r.body.flushed).toEqual([q.deliveryId]);
    const d = (await list()).find((x) => x.id === q.deliveryId)!;
    expect([d.status, d.origin]).toEqual(['accepted', 'queued_flush']);
  });

  it('the status sweep', async () => {
    const q = await queued('+15550005006');
    const config = loadConfig({ DATA_DIR: 'memory://' });
    const sweeper = createChannelService({
      store: app.store.kernel, vendors: createVendors(config), logger: createLogger('silent', 'test'), queueExpiryMs: 7 * 86_400_000, fetchAttachments: async () => [],
    });
    expect(await sweeper.sweep(new Date(Date.now() + 8 * 86_400_000))).toBeGreaterThan(0);
    expect(await statusIn(q.deliveryId)).toBe('expired');
  });

  it("another family's notification (the port a worker sends through)", async () => {
    const before = (await list()).length;
    const config = loadConfig({ DATA_DIR: 'memory://' });
    const port = createChannelNotifications({ config, store: app.store.kernel, logger: createLogger('silent', 'test'), vendors: createVendors(config), metrics: createFamilyMetrics(new Registry()) });
    const outcome = await port.send({ orgId: 'org_acme', agentId: 'agt_support', channel: 'sms', thread: 'usr_sms', subject: '', text: 'run ended', deliveryId: 'dlv_cache_notification' });
    expect(outcome).toMatchObject({ kind: 'sent', deliveryId: 'dlv_cache_notification' });
    const after = await list();
    expect(after).toHaveLength(before + 1);
    expect(after[0]).toMatchObject({ id: 'dlv_cache_notification', origin: 'notification' });
  });
});

describe('the deliveries list across API processes on Postgres', () => {
  const seed = writeChannelsSeed();
  const otherEnv = (db: TestDatabase, env: Record<string, string> = {}) => ({
    PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, SEED_FILE: seed, LOG_LEVEL: 'silent', SANDBOX_RECEIPT_STEP_MS: '50', CHANNEL_SWEEP_INTERVAL_MS: '0', ...env,
  });
  const apis = twoApisOnOneDatabase({ app: { SEED_FILE: seed, CHANNEL_SWEEP_INTERVAL_MS: '0' }, other: (db) => otherEnv(db) });

  const there = async (path: string, body: unknown, token = 'lk_send', at = apis.other) => {
    const res = await fetch(`${at.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json()) as Record<string, any>;
    expect(res.status, JSON.stringify(json)).toBe(200);
    return json;
  };
  /** What this process's cache answers: the statuses of the agent's deliveries, by id (only a notification drops the entry). */
  const cached = () => {
    const cache = apis.caches.cache<Map<string, string>>(DELIVERIES_TOPIC, { maxAgeMs: 600_000 });
    return () => cache.get('statuses', async () => new Map((await apis.app.store.sql.query<{ id: string; status: string }>("select id, status from channel_deliveries where agent_id = 'agt_support'")).map((r) => [r.id, r.status])));
  };
  /** Waits for the cached statuses to show `id` at `status`, and checks that this process wrote nothing of the topic meanwhile. */
  const expectNotified = async (read: () => Promise<Map<string, string>>, id: string, status: string, epoch: number) => {
    await waitFor(async () => (await read()).get(id) === status || undefined, { timeoutMs: 10_000, what: `${id} ${status} in the cached statuses` });
    expect(topicEpoch(DELIVERIES_TOPIC)).toBe(epoch);
  };

  it("drops the entry on another process's send, receipt and flush", async () => {
    const read = cached();
    const epoch = topicEpoch(DELIVERIES_TOPIC);
    await read();
    const s = await there(`${BASE}/send`, { channel: 'sms', to: { phoneNumber: '+15550006001' }, text: 'x' });
    await expectNotified(read, s.deliveryId, 'accepted', epoch);
    await there('/developer/channels/receipts', { type: 'status', provider: 'sandbox-sms', eventId: 'cache-x-evt-1', messageId: s.messageId, status: 'delivered' }, 'lk_receipts');
    await expectNotified(read, s.deliveryId, 'delivered', epoch);
    const q = await there(`${BASE}/send`, { channel: 'chatapp', to: { phoneNumber: '+15550006002' }, text: 'queued' });
    await expectNotified(read, q.deliveryId, 'queued', epoch);
    await there('/developer/channels/receipts', {
      type: 'inbound', provider: 'sandbox-chatapp', eventId: 'cache-x-in-1', agentId: 'agt_support', userId: 'usr_cache_x', channel: 'chatapp', address: '+15550006002', messageId: 'wamid_cache_x',
    }, 'lk_receipts');
    await expectNotified(read, q.deliveryId, 'accepted', epoch);
    // The sandbox's receipts, which the other process hears and applies itself.
    const r = await there(`${BASE}/send`, { channel: 'sms', to: { phoneNumber: '+15550067777' }, text: 'x' });
    await expectNotified(read, r.deliveryId, 'read', epoch);
  });

  it("drops the entry on another process's sweep", async () => {
    const sweeper = await startServeProcess(otherEnv(apis.db, { CHANNEL_SWEEP_INTERVAL_MS: '100', CHANNEL_QUEUE_EXPIRY_MS: '1000' }));
    try {
      const read = cached();
      const epoch = topicEpoch(DELIVERIES_TOPIC);
      const q = await there(`${BASE}/send`, { channel: 'chatapp', to: { phoneNumber: '+15550006003' }, text: 'will expire' }, 'lk_send', sweeper);
      await waitFor(async () => (await read()).has(q.deliveryId) || undefined, { timeoutMs: 10_000, what: 'the queued send' });
      await expectNotified(read, q.deliveryId, 'expired', epoch);
    } finally {
      await sweeper.stop();
    }
  });

  it('shows a write of another process in the list (the route)', async () => {
    const list = async () => ((await apis.app.request('GET', LIST, { token: 'lk_send' })).body.data as Listed[]).map((d) => d.id);
    await list();
    const s = await there(`${BASE}/send`, { channel: 'sms', to: { phoneNumber: '+15550006004' }, text: 'x' });
    await waitFor(async () => (await list()).includes(s.deliveryId) || undefined, { timeoutMs: 10_000, what: "the other process's send in the list" });
  });

  it('caches nothing without a listening connection (DRAIN_CONFIG_LISTEN=false): a write no topic names is listed at once', async () => {
    const unlistened = await startApp({ DATABASE_URL: apis.db.url, SEED_FILE: seed, CHANNEL_SWEEP_INTERVAL_MS: '0', DRAIN_CONFIG_LISTEN: 'false' }, 'serve');
    try {
      const list = async () => ((await unlistened.request('GET', LIST, { token: 'lk_send' })).body.data as Listed[]).map((d) => d.id);
      const before = await list();
      await unlistened.store.sql.query(
        `insert into channel_deliveries (id, org_id, agent_id, channel, sender, recipient, provider, origin, status, history, created_at, updated_at)
         values ('dlv_unnamed', 'org_acme', 'agt_support', 'sms', 'sms:agt_support', '{}', 'sandbox-sms', 'channels_send', 'accepted', '[]', now() + interval '1 minute', now())`,
      );
      expect(await list()).toEqual(['dlv_unnamed', ...before]);
    } finally {
      await unlistened.stop();
    }
  });
});
