/**
 * The bulk chat-app template trigger (spec 03 part 4.2, contract C20) and
 * the delivery origins (spec 03 part 2.3, C20): the vendor's per-recipient
 * answers in order, one delivery record of origin `template` per recipient,
 * the limits and refusals (nothing sent or recorded), the scope, and the
 * origins the store holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../../helpers/app.js';
import { writeChannelsSeed } from '../../../helpers/channels-seed.js';
import { createChannelsRepo } from '../../../../src/modules/channels/repository.js';
import { createChannelService } from '../../../../src/modules/channels/service.js';
import type { Delivery } from '../../../../src/modules/channels/model.js';
import { createVendors } from '../../../../src/vendors/index.js';
import type { MessagingPort, TemplateTrigger } from '../../../../src/vendors/messaging/port.js';
import { loadConfig } from '../../../../src/config/config.js';
import { createLogger } from '../../../../src/telemetry/logger.js';

let app: TestApp;
const TRIGGER = '/admin/agents/agt_support/channels/chatapp-line-1/chatapp-templates/order_update/trigger';
const trigger = (body: unknown, token = 'lk_send', path = TRIGGER) => app.request('POST', path, { token, body });
const read = async (id: string) => (await app.request('GET', `/developer/agents/agt_support/channels/deliveries/${id}`, { token: 'lk_send' })).body.data;
/** Every delivery record of the store (the list route shows 200 at most). */
const recorded = async () => Number((await app.store.sql.query<{ n: number }>('select count(*)::int as n from channel_deliveries'))[0]!.n);

beforeAll(async () => {
  app = await startApp({ SEED_FILE: writeChannelsSeed(), SANDBOX_RECEIPT_STEP_MS: '50' });
});
afterAll(async () => {
  await app?.stop();
});

/** A refusal: 400 in the framework shape, and nothing recorded. */
async function expectRefused(body: unknown, message: string | RegExp): Promise<void> {
  const before = await recorded();
  const r = await trigger(body);
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'statusCode']);
  const text = Array.isArray(r.body.message) ? r.body.message.join('; ') : r.body.message;
  if (typeof message === 'string') expect(text).toContain(message);
  else expect(text).toMatch(message);
  expect(await recorded()).toBe(before);
}

describe('POST /admin/agents/:agentId/channels/:channelId/chatapp-templates/:templateId/trigger', () => {
  it("answers the vendor's response for each recipient in order, and records one template delivery each", async () => {
    const before = await recorded();
    const recipients = [
      { userId: 'usr_chat', params: { '1': 'Ann', '2': 'A-100' } },
      // A closed window: a template goes out whatever the window.
      { userId: 'usr_stale' },
      // A cold number, and the number an end user wrote from.
      { phoneNumber: '+15550009001', params: { name: 'Bo' } },
      { phoneNumber: '+15550002222' },
    ];
    const r = await trigger({ recipients });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      results: [
        { to: '+15550001111', status: 'accepted', deliveryId: expect.stringMatching(/^dlv_/) },
        { to: '+15550002222', status: 'accepted', deliveryId: expect.stringMatching(/^dlv_/) },
        { to: '+15550009001', status: 'accepted', deliveryId: expect.stringMatching(/^dlv_/) },
        { to: '+15550002222', status: 'accepted', deliveryId: expect.stringMatching(/^dlv_/) },
      ],
    });
    expect(new Set(r.body.results.map((x: { deliveryId: string }) => x.deliveryId)).size).toBe(4);
    expect(await recorded()).toBe(before + 4);
    // One audit entry for the trigger, with counts and no recipient in it.
    const [entry] = await app.store.audit.page('org_acme', { action: 'channels.template.triggered', targetId: 'agt_support', limit: 1 });
    expect(entry).toMatchObject({
      actor: { type: 'api_key', id: expect.stringMatching(/^key_/) }, targetType: 'agent',
      details: { channelId: 'chatapp-line-1', templateId: 'order_update', recipients: 4, accepted: 4, failed: 0 },
    });
    expect(JSON.stringify(entry)).not.toMatch(/\+1555|usr_chat|usr_stale/);
    const expected = [
      { to: { userId: 'usr_chat' }, userId: 'usr_chat', address: '+15550001111' },
      { to: { userId: 'usr_stale' }, userId: 'usr_stale', address: '+15550002222' },
      { to: { phoneNumber: '+15550009001' }, userId: null, address: '+15550009001' },
      { to: { phoneNumber: '+15550002222' }, userId: 'usr_stale', address: '+15550002222' },
    ];
    for (const [i, result] of r.body.results.entries()) {
      const d = await read(result.deliveryId);
      expect(d).toEqual({
        id: result.deliveryId, agentId: 'agt_support', channel: 'chatapp', channelIdentifier: 'chatapp-line-1', from: 'chatapp-line-1',
        ...expected[i], provider: 'sandbox-chatapp', origin: 'template', status: 'accepted', failure: null,
        history: [{ status: 'accepted', at: d.createdAt, source: 'send' }], messageId: expect.stringMatching(/^sbx_/),
        template: 'order_update', idempotencyKey: null, createdAt: expect.any(String), updatedAt: d.createdAt,
      });
    }
  });

  it("moves a trigger's deliveries with the sandbox receipts, as a single send's", async () => {
    const r = await trigger({ recipients: [{ phoneNumber: '+15550017777' }, { phoneNumber: '+15550019999' }] });
    expect(r.status).toBe(200);
    const [read7777, fail9999] = r.body.results.map((x: { deliveryId: string }) => x.deliveryId);
    await waitFor(async () => (await read(read7777)).status === 'read', { what: 'the read receipt' });
    expect((await read(read7777)).history.map((h: { status: string; source: string }) => [h.status, h.source])).toEqual([
      ['accepted', 'send'], ['sent', 'callback'], ['delivered', 'callback'], ['read', 'callback'],
    ]);
    await waitFor(async () => (await read(fail9999)).status === 'failed', { what: 'the failed receipt' });
    expect((await read(fail9999)).failure).toMatchObject({ category: 'unreachable', owner: 'recipient', retryable: false, provider: 'sandbox-chatapp' });
  });

  it('takes 1000 recipients, each one message and one delivery record', async () => {
    const before = await recorded();
    const recipients = Array.from({ length: 1000 }, (_, i) => ({ phoneNumber: `+1555100${String(i).padStart(4, '0')}`, params: { '1': `n${i}` } }));
    const r = await trigger({ recipients }, 'lk_send', '/admin/agents/agt_support/channels/chatapp-line-1/chatapp-templates/bulk_1000/trigger');
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.results.map((x: { to: string }) => x.to)).toEqual(recipients.map((x) => x.phoneNumber));
    expect(await recorded()).toBe(before + 1000);
    const rows = await app.store.sql.query<{ id: string; origin: string; template: string; address: string }>(
      "select id, origin, template, address from channel_deliveries where template = 'bulk_1000' order by address",
    );
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((x) => x.origin))).toEqual(new Set(['template']));
    expect(rows.map((x) => x.id).sort()).toEqual(r.body.results.map((x: { deliveryId: string }) => x.deliveryId).sort());
  });

  it('refuses a body outside the limits and rules of C20, sending and recording nothing', async () => {
    await expectRefused({ recipients: [] }, 'recipients must hold 1-1000 recipients');
    await expectRefused({ recipients: Array.from({ length: 1001 }, () => ({ phoneNumber: '+15550009002' })) }, 'recipients must hold 1-1000 recipients');
    await expectRefused({}, 'recipients is required');
    await expectRefused({ recipients: [{ userId: 'usr_chat', phoneNumber: '+15550009003' }] }, 'recipients.0 must hold exactly one of userId and phoneNumber');
    await expectRefused({ recipients: [{ phoneNumber: '+15550009004' }, { params: { '1': 'x' } }] }, 'recipients.1 must hold exactly one of userId and phoneNumber');
    await expectRefused({ recipients: [{}] }, 'recipients.0 must hold exactly one of userId and phoneNumber');
    await expectRefused({ recipients: [{ phoneNumber: '5550009005' }] }, 'recipients[].phoneNumber must be an E.164 number');
    await expectRefused({ recipients: [{ email: 'a@b.test' }] }, 'recipients.0.email is not a known field');
    await expectRefused({ recipients: [{ phoneNumber: '+15550009006', params: { '1': 5 } }] }, 'recipients[].params values must be strings');
    await expectRefused({ recipients: [{ phoneNumber: '+15550009007', params: { 'bad name': 'x' } }] }, 'recipients[].params names must be 1-64 letters, digits or _');
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, 'x']));
    await expectRefused({ recipients: [{ phoneNumber: '+15550009008', params: many }] }, 'recipients[].params holds at most 20 values');
    await expectRefused({ recipients: [{ phoneNumber: '+15550009009' }], extra: true }, 'extra is not a known field');
  });

  it('refuses the whole trigger when a userId has no chat-app conversation, naming each such recipient', async () => {
    await expectRefused(
      { recipients: [{ userId: 'usr_chat' }, { userId: 'usr_sms' }, { phoneNumber: '+15550009010' }, { userId: 'usr_nobody' }] },
      /^recipients\[1\]: the end user usr_sms has no chat-app conversation.*; recipients\[3\]: the end user usr_nobody has no chat-app conversation/,
    );
  });

  it('needs channels:send on the agent', async () => {
    const body = { recipients: [{ phoneNumber: '+15550009011' }] };
    const denied = await trigger(body, 'lk_read');
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'channels:send', resourceType: 'agent', resourceId: 'agt_support' });
    expect((await trigger(body, 'lk_wild')).status).toBe(200);
    for (const agent of ['agt_sales', 'agt_globex', 'agt_nope']) {
      const r = await trigger(body, 'lk_send', `/admin/agents/${agent}/channels/chatapp-line-1/chatapp-templates/order_update/trigger`);
      expect(r.status, agent).toBe(403);
      expect(r.body, agent).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceId: agent, requiredScope: 'channels:send' });
    }
    expect((await trigger(body, 'none')).status).toBe(401);
    // Another organization's key on its own agent.
    expect((await trigger(body, 'lk_globex_send', '/admin/agents/agt_globex/channels/line/chatapp-templates/t/trigger')).status).toBe(200);
  });
});

describe('a vendor that refuses some recipients', () => {
  it("passes its responses through unchanged and records the refused ones as failed deliveries", async () => {
    const vendors = createVendors(loadConfig({ DATA_DIR: 'memory://' }));
    const seen: TemplateTrigger[] = [];
    // A vendor of its own words: it refuses numbers ending in 0000 with a paused template.
    const messaging: MessagingPort = {
      ...vendors.messaging,
      async triggerTemplate(t) {
        seen.push(t);
        return t.recipients.map((r, i) => (r.address.endsWith('0000')
          ? {
              raw: { msisdn: r.address, state: 'rejected', ref: r.reference, error: { code: 'TEMPLATE_PAUSED', index: i } },
              outcome: { ok: false as const, provider: 'vendor-x', failure: { category: 'template' as const, code: 'TEMPLATE_PAUSED', title: 'Template paused', detail: null, href: null, retryable: false, owner: 'customer' as const } },
            }
          : { raw: { msisdn: r.address, state: 'queued', ref: r.reference }, outcome: { ok: true as const, provider: 'vendor-x', messageId: `vx_${i}` } }));
      },
    };
    const service = createChannelService({
      store: app.store, vendors: { ...vendors, messaging }, logger: createLogger('silent', 'test'), queueExpiryMs: 86_400_000, fetchAttachments: async () => [],
    });
    const out = await service.triggerTemplate({ orgId: 'org_acme', agentId: 'agt_support', idempotencyKey: undefined }, {
      userId: 'usr_ann', channelId: 'line-x', templateId: 'promo', recipients: [{ phoneNumber: '+15550030000' }, { userId: 'usr_chat', params: { '1': 'Ann' } }],
    });
    expect(seen).toHaveLength(1);
    const refs = seen[0]!.recipients.map((r) => r.reference);
    expect(seen[0]).toEqual({
      channelId: 'line-x', templateId: 'promo',
      recipients: [{ reference: refs[0], address: '+15550030000', params: {} }, { reference: refs[1], address: '+15550001111', params: { '1': 'Ann' } }],
    });
    expect(out).toEqual({
      results: [
        { msisdn: '+15550030000', state: 'rejected', ref: refs[0], error: { code: 'TEMPLATE_PAUSED', index: 0 } },
        { msisdn: '+15550001111', state: 'queued', ref: refs[1] },
      ],
    });
    const failed = await read(refs[0]!);
    expect(failed).toMatchObject({
      origin: 'template', status: 'failed', provider: 'vendor-x', messageId: null, template: 'promo', to: { phoneNumber: '+15550030000' },
      failure: { category: 'template', code: 'TEMPLATE_PAUSED', provider: 'vendor-x', owner: 'customer', retryable: false },
    });
    expect(failed.history).toEqual([{ status: 'failed', at: failed.createdAt, source: 'send' }]);
    expect(await read(refs[1]!)).toMatchObject({ origin: 'template', status: 'accepted', messageId: 'vx_1', userId: 'usr_chat', failure: null });
    const [entry] = await app.store.audit.page('org_acme', { action: 'channels.template.triggered', targetId: 'agt_support', limit: 1 });
    expect(entry).toMatchObject({ actor: { type: 'user', id: 'usr_ann' }, targetType: 'agent', details: { channelId: 'line-x', templateId: 'promo', recipients: 2, accepted: 1, failed: 1 } });
  });
});

describe('delivery origins', () => {
  const base = (id: string, origin: string): Delivery => ({
    id, orgId: 'org_acme', agentId: 'agt_support', channel: 'chatapp', channelIdentifier: null, from: 'chatapp:agt_support', to: { userId: 'usr_chat' },
    userId: 'usr_chat', address: '+15550001111', provider: 'sandbox-chatapp', origin: origin as Delivery['origin'], status: 'accepted', failure: null,
    history: [{ status: 'accepted', at: new Date().toISOString(), source: 'send' }], messageId: `m_${id}`, template: null, idempotencyKey: null,
    cost: null, createdAt: new Date(), updatedAt: new Date(),
  });

  it('holds the four origins of C20 and reads them back; the store refuses any other', async () => {
    const repo = createChannelsRepo(app.store.sql);
    for (const origin of ['channels_send', 'queued_flush', 'notification', 'template']) {
      await repo.insertDelivery(base(`dlv_origin_${origin}`, origin));
      expect((await read(`dlv_origin_${origin}`)).origin).toBe(origin);
    }
    await expect(repo.insertDelivery(base('dlv_origin_bogus', 'agent_reply'))).rejects.toThrow(/channel_deliveries_origin/);
    await expect(repo.insertDeliveries([base('dlv_origin_bogus_2', 'bogus')])).rejects.toThrow(/channel_deliveries_origin/);
  });
});
