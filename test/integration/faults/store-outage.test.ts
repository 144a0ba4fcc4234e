/**
 * Every route family while its Postgres cannot be reached (spec 01 part 7.1.5, CONTRACT part 7):
 * the API reaches the server through a TCP relay the test cuts and restores (store-relay.ts). Each
 * family's reads and writes answer `503 UPSTREAM_UNAVAILABLE` in the family's envelope; the reads
 * and the writes carrying an idempotency key with `retryAfterSeconds` and `Retry-After`, the other
 * writes with neither. Nothing is written meanwhile; once the relay is back the same requests
 * succeed, and each write made its row once. (The workflow routes: workflow-store-down.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { SEED_FIXTURE, startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { relayedDatabase, type StoreRelay } from '../../helpers/store-relay.js';
import { writeChannelsSeed } from '../../helpers/channels-seed.js';
import { PERSONA_SEED } from '../../helpers/persona.js';
import { record } from '../../helpers/records.js';
import { listSkill, publish, SKILLS, SKILLS_SEED } from '../../helpers/skills.js';

const TELEPHONY_SEED = new URL('../../fixtures/seed-telephony.json', import.meta.url).pathname;

type Answer = Awaited<ReturnType<TestApp['request']>>;

interface Outage {
  app: TestApp;
  relay: StoreRelay;
  /** Rows straight from the database, past the relay. */
  rows<T extends Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

async function startOutage(env: Record<string, string>): Promise<Outage> {
  const { db, relay, url, dispose } = await relayedDatabase();
  let app: TestApp | undefined;
  const direct = new pg.Client({ connectionString: db.url });
  try {
    app = await startApp({ DATABASE_URL: url, WORKFLOW_EXECUTOR: 'false', ...env }, 'serve');
    await direct.connect();
  } catch (e) {
    await app?.stop().catch(() => {});
    await dispose();
    throw e;
  }
  return {
    app, relay,
    rows: async (sql, params = []) => (await direct.query(sql, params)).rows,
    async close() {
      await relay.restore().catch(() => {});
      await app!.stop().catch(() => {});
      await direct.end().catch(() => {});
      await dispose();
    },
  };
}

/**
 * The answer once the outage reaches the request: a read may still be served for a moment from a
 * cache the API keeps (credentials, drain rows: at most a few seconds); any other answer fails.
 */
async function refused(ask: () => Promise<Answer>): Promise<Answer> {
  return waitFor(async () => {
    const res = await ask();
    if (res.status === 503) return res;
    if (res.status !== 200) throw new Error(`neither served nor refused: ${res.status} ${JSON.stringify(res.body)}`);
    return undefined;
  }, { what: 'the outage to reach the request', timeoutMs: 10_000, intervalMs: 50 });
}

/** Once the relay is back: the request's answer once the store's pool has reconnected. */
async function served(ask: () => Promise<Answer>, status: number): Promise<Answer> {
  return waitFor(async () => {
    const res = await ask();
    if (res.status === status) return res;
    if (res.status !== 503) throw new Error(`expected ${status} once the store is back: ${res.status} ${JSON.stringify(res.body)}`);
    return undefined;
  }, { what: `a ${status} once the store is back`, timeoutMs: 20_000, intervalMs: 100 });
}

/** Spec 01 part 7.1's platform shape; `retry`: the answer invites a blind retry. */
function expectUnavailable(res: Answer, retry: boolean, shape: 'conventions' | 'workflows' = 'conventions'): void {
  const head = shape === 'conventions' ? { statusCode: 503, error: 'Service Unavailable' } : { statusCode: 503 };
  expect(res.body).toEqual({ ...head, code: 'UPSTREAM_UNAVAILABLE', message: expect.any(String), ...(retry ? { retryAfterSeconds: 1 } : {}) });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe(retry ? '1' : null);
}

const count = async (o: Outage, sql: string, params: unknown[] = []): Promise<number> =>
  Number((await o.rows<{ n: number }>(`select count(*)::int as n from ${sql}`, params))[0]!.n);

describe('a store outage on every route family', () => {
  describe('drains', () => {
    let o: Outage;
    beforeAll(async () => {
      o = await startOutage({ SEED_FILE: SEED_FIXTURE, DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost' });
    });
    afterAll(() => o?.close());
    const BASE = '/admin/orgs/org_acme/log-drains';
    const list = () => o.app.request('GET', BASE, { token: 'lk_acme_manage' });
    const create = () => o.app.request('POST', BASE, { token: 'lk_acme_manage', body: { name: 'outage', type: 'http', endpoint: 'https://localhost:8443/in' } });

    it('answers reads 503 with Retry-After and a create 503 without, writes nothing, and serves both once the store is back', async () => {
      expect((await list()).status).toBe(200);
      await o.relay.cut();
      expectUnavailable(await refused(list), true);
      expectUnavailable(await create(), false);
      expect(await count(o, 'drains')).toBe(0);

      await o.relay.restore();
      expect((await served(create, 201)).body).toMatchObject({ name: 'outage' });
      expect((await served(list, 200)).body.drains.map((d: { name: string }) => d.name)).toEqual(['outage']);
      expect(await count(o, 'drains')).toBe(1);
      expect(await count(o, "audit_log where action = 'logs.drain.created'")).toBe(1);
    });
  });

  describe('logs', () => {
    let o: Outage;
    beforeAll(async () => {
      o = await startOutage({ SEED_FILE: SEED_FIXTURE });
    });
    afterAll(() => o?.close());
    const orgLogs = () => o.app.request('GET', '/admin/orgs/org_acme/logs', { token: 'lk_acme_wild' });
    const agentLogs = () => o.app.request('GET', '/developer/agents/agt_support/logs', { token: 'lk_acme_wild' });

    it('answers its reads 503 with Retry-After, then 200 once the store is back', async () => {
      await o.relay.cut();
      expectUnavailable(await refused(orgLogs), true);
      expectUnavailable(await refused(agentLogs), true);
      await o.relay.restore();
      expect((await served(orgLogs, 200)).body).toMatchObject({ logs: [] });
      expect((await served(agentLogs, 200)).body).toMatchObject({ logs: [] });
    });
  });

  describe('ingest', () => {
    let o: Outage;
    beforeAll(async () => {
      o = await startOutage({ SEED_FILE: SEED_FIXTURE });
    });
    afterAll(() => o?.close());
    const batch = [record(), record()];
    const post = () => o.app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: batch });

    it('answers 503 without Retry-After (records carry no idempotency key), queues nothing, and queues them once when sent again', async () => {
      await o.relay.cut();
      expectUnavailable(await post(), false);
      expect(await count(o, 'ingest_queue')).toBe(0);
      await o.relay.restore();
      expect((await served(post, 202)).body).toEqual({ accepted: 2, rejected: [] });
      expect(await count(o, 'ingest_queue')).toBe(2);
    });
  });

  describe('telephony', () => {
    let o: Outage;
    beforeAll(async () => {
      o = await startOutage({ SEED_FILE: TELEPHONY_SEED });
    });
    afterAll(() => o?.close());
    const BASE = '/developer/orgs/org_acme/sip-trunks';
    const list = () => o.app.request('GET', BASE, { token: 'lk_tel_all' });
    const create = () => o.app.request('POST', BASE, { token: 'lk_tel_all', body: { acl: ['203.0.113.0/24'] } });

    it('answers a list 503 with Retry-After and a trunk creation 503 without, in the platform shape, and serves both once the store is back', async () => {
      await o.relay.cut();
      expectUnavailable(await refused(list), true);
      expectUnavailable(await create(), false);
      expect(await count(o, 'telephony_sip_trunks')).toBe(0);
      await o.relay.restore();
      expect((await served(create, 201)).body).toMatchObject({ status: 'active' });
      expect((await served(list, 200)).status).toBe(200);
      expect(await count(o, 'telephony_sip_trunks')).toBe(1);
    });
  });

  describe('channels', () => {
    let o: Outage;
    beforeAll(async () => {
      o = await startOutage({ SEED_FILE: writeChannelsSeed() });
    });
    afterAll(() => o?.close());
    const BASE = '/developer/agents/agt_support/channels';
    const sms = { channel: 'sms', to: { userId: 'usr_sms' }, text: 'during the outage' };
    const keyed = () => o.app.request('POST', `${BASE}/send`, { token: 'lk_send', body: sms, headers: { 'x-idempotency-key': 'outage-1' } });
    const unkeyed = () => o.app.request('POST', `${BASE}/send`, { token: 'lk_send', body: { ...sms, text: 'no key' } });
    const deliveries = () => o.app.request('GET', `${BASE}/deliveries`, { token: 'lk_send' });
    // A vendor's callback, applied once per event id: its idempotency key.
    const inbound = { type: 'inbound', provider: 'sandbox-chatapp', eventId: 'outage-in-1', agentId: 'agt_support', userId: 'usr_uk', channel: 'chatapp', address: '+447700900123', messageId: 'wamid_outage' };
    const receipt = () => o.app.request('POST', '/developer/channels/receipts', { token: 'lk_receipts', body: inbound });

    it('answers a keyed send, a vendor receipt and a read 503 with Retry-After, an unkeyed send 503 without; once back, the keyed send makes one delivery and the receipt one event however often repeated', async () => {
      await o.relay.cut();
      expectUnavailable(await refused(deliveries), true);
      expectUnavailable(await keyed(), true);
      expectUnavailable(await unkeyed(), false);
      expectUnavailable(await receipt(), true);
      expect(await count(o, 'channel_deliveries')).toBe(0);
      expect(await count(o, 'channel_receipt_events')).toBe(0);

      await o.relay.restore();
      const first = await served(keyed, 200);
      const again = await keyed();
      expect(again.status).toBe(200);
      expect(again.body.deliveryId).toBe(first.body.deliveryId);
      expect((await served(unkeyed, 200)).status).toBe(200);
      expect(await count(o, "channel_deliveries where idempotency_key = 'outage-1'")).toBe(1);
      expect(await count(o, 'channel_deliveries')).toBe(2);
      expect((await served(deliveries, 200)).body.data).toHaveLength(2);
      expect((await served(receipt, 200)).body).toMatchObject({ eventId: 'outage-in-1', duplicate: false });
      expect((await receipt()).body).toMatchObject({ duplicate: true });
      expect(await count(o, "channel_receipt_events where event_id = 'outage-in-1'")).toBe(1);
    });
  });

  describe('persona', () => {
    let o: Outage;
    beforeAll(async () => {
      o = await startOutage({ SEED_FILE: PERSONA_SEED });
    });
    afterAll(() => o?.close());
    const BASE = '/developer/agents/agt_p1/persona';
    const versions = () => o.app.request('GET', `${BASE}/versions`, { token: 'lk_p_all' });
    const create = () => o.app.request('POST', `${BASE}/version`, { token: 'lk_p_all', body: { persona: 'You are the support bot.' } });

    it('answers its version list 503 with Retry-After and a new version 503 without, and numbers the version 1 once the store is back', async () => {
      await o.relay.cut();
      expectUnavailable(await refused(versions), true);
      expectUnavailable(await create(), false);
      expect(await count(o, "persona_versions where agent_id = 'agt_p1'")).toBe(0);
      await o.relay.restore();
      expect((await served(create, 201)).body).toMatchObject({ status: 'success', version: 1 });
      expect((await served(versions, 200)).body.versions).toHaveLength(1);
      expect(await count(o, "persona_versions where agent_id = 'agt_p1'")).toBe(1);
    });
  });

  describe('skills', () => {
    let o: Outage;
    let skillId: string;
    beforeAll(async () => {
      o = await startOutage({ SEED_FILE: SKILLS_SEED });
      skillId = (await listSkill(o.app, 'lk_s_write', { sourceSkillId: 'skl_install', displayName: 'Outage' })).id;
      await publish(o.app, 'lk_s_write', skillId, '1.0.0');
    });
    afterAll(() => o?.close());
    const search = () => o.app.request('GET', `${SKILLS}?search=outage`, { token: 'lk_s_read' });
    const install = (agentId: string, key?: string) => o.app.request('POST', `/marketplace/install/${skillId}/${agentId}`, {
      token: 'lk_s_write', body: {}, ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });
    const installs = (agentId: string) => count(o, 'skills_installs where skill_id = $1 and agent_id = $2', [skillId, agentId]);

    it('answers a search and a keyed install 503 with Retry-After, an unkeyed install without, and installs once when the store is back', async () => {
      await o.relay.cut();
      const read = await refused(search);
      expect(read.status).toBe(503);
      expect(read.headers.get('retry-after')).toBe('1');
      const keyed = await install('agt_s11', 'outage-install-0001');
      expect(keyed.status).toBe(503);
      expect(keyed.headers.get('retry-after')).toBe('1');
      const unkeyed = await install('agt_s12');
      expect(unkeyed.status).toBe(503);
      expect(unkeyed.headers.get('retry-after')).toBeNull();
      expect(await installs('agt_s11')).toBe(0);
      await o.relay.restore();
      // The keyed retry installs; its second retry replays the answer and installs nothing more.
      expect((await served(() => install('agt_s11', 'outage-install-0001'), 201)).body).toMatchObject({ agentId: 'agt_s11', version: '1.0.0' });
      expect((await install('agt_s11', 'outage-install-0001')).status).toBe(201);
      expect(await installs('agt_s11')).toBe(1);
      expect((await served(search, 200)).body.data.map((x: { id: string }) => x.id)).toContain(skillId);
    });
  });
});
