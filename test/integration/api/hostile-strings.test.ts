/**
 * Text the store cannot hold (NUL, half a surrogate pair) and instants outside 1970-01-01 to
 * 9999-12-31, on each family's routes: a 400 in the family's shape naming the field, before
 * anything is written, spent or sent. Each case here answered 500 (after its side effects, some of
 * them), or was accepted and stored altered; the fuzz suite (fuzz.test.ts) covers every field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../helpers/api-app.js';
import { record } from '../../helpers/records.js';

const NUL = 'a\u0000b';
const SURROGATE = 'b\ud800';
let app: TestApi;

beforeAll(async () => {
  app = await startApi({});
});
afterAll(async () => {
  await app?.stop();
});

const count = async (sql: string, params: unknown[] = []) => (await app.store.sql.query<{ n: number }>(`select count(*)::int as n from ${sql}`, params))[0]!.n;

describe('telephony', () => {
  const SUPPORT = '/developer/voice-agents/agt_support';
  const H = { token: 'sess_ann' };
  let voiceId: string;
  beforeAll(async () => {
    const voice = await app.request('POST', SUPPORT, { ...H, body: { name: 'hostile-voice' } });
    expect(voice.status, JSON.stringify(voice.body)).toBe(201);
    voiceId = voice.body.id;
    const pushed = await app.request('POST', `${SUPPORT}/${voiceId}/version`, { ...H, body: { version: '1.0.0', llm: { kind: 'inference', model: 'm' } } });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
  });

  it('a dispatch whose threadId holds NUL or half a surrogate pair is refused before a call is placed', async () => {
    const dispatched = () => count('telephony_dispatches');
    const before = await dispatched();
    for (const threadId of [NUL, SURROGATE]) {
      const res = await app.request('POST', `${SUPPORT}/dispatch`, { ...H, body: { to: '+14155550100', threadId } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['threadId must not contain NUL characters or unpaired surrogates'] });
    }
    expect(await dispatched()).toBe(before);
  });

  it('a voice, an RCS agent and a version path holding NUL answer 400 naming the field, and nothing is created', async () => {
    const voices = async () => (await app.request('GET', SUPPORT, H)).body.voices.length as number;
    const rcsAgents = () => count('telephony_rcs_agents');
    const [v0, r0] = [await voices(), await rcsAgents()];
    const voice = await app.request('POST', SUPPORT, { ...H, body: { name: 'v-nul', description: NUL } });
    expect(voice.status).toBe(400);
    expect(JSON.stringify(voice.body)).toContain('description must not contain NUL characters or unpaired surrogates');
    const rcs = await app.request('POST', '/developer/orgs/org_acme/rcs-agents', { ...H, body: { senderId: NUL, displayName: 'x' } });
    expect(rcs.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['senderId must not contain NUL characters or unpaired surrogates'] });
    const publish = await app.request('PUT', `${SUPPORT}/${voiceId}/1%00/publish`, H);
    expect(publish.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['version must not contain NUL characters or unpaired surrogates'] });
    expect([await voices(), await rcsAgents()]).toEqual([v0, r0]);
  });
});

describe('channels', () => {
  const BASE = '/developer/agents/agt_support/channels';
  const H = { token: 'sess_ann' };
  const receipt = (body: unknown) => app.request('POST', '/developer/channels/receipts', { token: 'lk_acme_receipts', body });
  const inbound = { type: 'inbound', provider: 'sandbox-sms', agentId: 'agt_support', userId: 'u-hostile', channel: 'sms', address: '+15550001111', messageId: 'm-1' };

  it('a send to a userId holding NUL, and a delivery id holding NUL, answer 400 naming it; nothing is sent', async () => {
    const deliveries = () => count('channel_deliveries');
    const before = await deliveries();
    const sent = await app.request('POST', `${BASE}/send`, { ...H, body: { channel: 'sms', to: { userId: NUL }, text: 'x' } });
    expect(sent.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['to.userId must not contain NUL characters or unpaired surrogates'] });
    const read = await app.request('GET', `${BASE}/deliveries/dlv_x%00`, H);
    expect(read.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['deliveryId must not contain NUL characters or unpaired surrogates'] });
    expect(await deliveries()).toBe(before);
  });

  it('deliveries `since` and receipts\' `at` outside 1970-01-01 to 9999-12-31, or off the calendar, answer 400 naming them', async () => {
    for (const since of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:60Z', '10000-01-01T00:00:00Z', '1969-12-31T23:59:59Z']) {
      const res = await app.request('GET', `${BASE}/deliveries?since=${encodeURIComponent(since)}`, H);
      expect(res.status, since).toBe(400);
      expect(res.body.message).toEqual(['since must be an ISO 8601 date-time with a zone, from 1970-01-01 to 9999-12-31 (UTC)']);
    }
    expect((await app.request('GET', `${BASE}/deliveries?since=${encodeURIComponent('9999-12-31T23:59:59.999Z')}`, H)).status).toBe(200);
    const at = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'e-year0', messageId: 'm-none', status: 'delivered', at: '0000-01-01T00:00:00Z' });
    expect(at.status).toBe(400);
    // The receipt body is a choice of two shapes: the rules of the other one follow.
    expect(at.body.message[0]).toBe('at must be an ISO 8601 date-time with a zone, from 1970-01-01 to 9999-12-31 (UTC)');
  });

  it('a receipt dated outside 30 days back to 5 minutes ahead is refused unclaimed: it cannot hold the chat-app window open', async () => {
    const day = 86_400_000;
    for (const [eventId, receivedAt] of [['e-far', '9999-12-31T23:59:59Z'], ['e-ahead', new Date(Date.now() + 10 * 60_000).toISOString()], ['e-old', new Date(Date.now() - 31 * day).toISOString()]] as const) {
      const res = await receipt({ ...inbound, eventId, receivedAt });
      expect(res.body, eventId).toEqual({ statusCode: 400, error: 'Bad Request', message: ['receivedAt must lie within 30 days before now and 5 minutes after'] });
      // Nothing was claimed: the vendor's retry with a sound time is recorded.
      const retried = await receipt({ ...inbound, eventId, receivedAt: new Date().toISOString() });
      expect(retried.status).toBe(200);
      expect(retried.body).toMatchObject({ eventId, duplicate: false });
    }
    const status = await receipt({ type: 'status', provider: 'sandbox-sms', eventId: 'e-status', messageId: 'm-none', status: 'delivered', at: '9999-12-31T23:59:59Z' });
    expect(status.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['at must lie within 30 days before now and 5 minutes after'] });
    expect(await count(`channel_receipt_events where event_id = 'e-status'`)).toBe(0);
  });
});

describe('workflows', () => {
  const BASE = '/workflows/agt_support';
  const H = { token: 'sess_ann' };

  it('a run id holding NUL and an updatedSince past year 9999 answer 400 naming them (the rollup\'s bounds: modules/workflows/rollup.test.ts)', async () => {
    for (const [method, path] of [['GET', `${BASE}/runs/wfr_x%00`], ['POST', `${BASE}/runs/wfr_x%00/cancel`], ['DELETE', `${BASE}/runs/wfr_x%00`]] as const) {
      const res = await app.request(method, path, { ...H, ...(method === 'POST' ? { body: {} } : {}) });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'runId', details: [{ path: 'runId', constraint: 'storable' }] });
    }
    for (const updatedSince of ['253402300800000', '999999999999999']) {
      const res = await app.request('GET', `${BASE}/runs?updatedSince=${updatedSince}`, H);
      expect(res.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', field: 'updatedSince' });
    }
  });

  it('cursors that decode to a NUL id or an instant past year 9999 are not cursors of the route', async () => {
    const cursor = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const [route, parts] of [['definitions', [9e15, 'wf_x']], ['definitions', [0, 'wf\u0000']], ['runs', ['-createdAt', 1, 'wfr\u0000']]] as const) {
      const res = await app.request('GET', `${BASE}/${route}?cursor=${cursor([...parts])}`, H);
      expect(res.status, `${route} ${JSON.stringify(parts)}`).toBe(400);
      expect(res.body.code).toBe('BAD_CURSOR');
    }
  });

  it('a start whose input holds a lone surrogate is refused naming input.day; no run is made', async () => {
    const runs = () => count('workflow_runs');
    const before = await runs();
    const res = await app.request('POST', `${BASE}/runs`, { ...H, body: { workflowName: 'nightly-report', input: { day: SURROGATE } } });
    expect(res.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', field: 'input.day' });
    const key = await app.request('POST', `${BASE}/runs`, { ...H, body: { workflowName: 'nightly-report', input: { [`k${NUL}`]: 1 } } });
    expect(key.body).toMatchObject({ statusCode: 400, field: 'input', message: 'input must not hold a key with NUL characters or unpaired surrogates' });
    expect(await runs()).toBe(before);
  });
});

describe('persona, drains, log reads and ingest', () => {
  it('persona: the failing field is named, not the whole body', async () => {
    const res = await app.request('POST', '/developer/agents/agt_support/persona/draft', { token: 'sess_ann', body: { roleAndPurpose: ['ok', NUL] } });
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['roleAndPurpose.1 must not contain NUL characters or unpaired surrogates'] });
  });

  it('drains keep their answer (the top-level field); log reads name the parameter', async () => {
    const H = { token: 'lk_acme_legacy' };
    const created = await app.request('POST', '/admin/orgs/org_acme/log-drains', { ...H, body: { name: 'hostile', type: 'http', endpoint: 'https://example.com/x', scrubRules: [{ id: `r${NUL}`, pattern: 'x' }] } });
    expect(created.body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'scrubRules', message: ['scrubRules must not contain NUL characters or unpaired surrogates'] });
    const logs = await app.request('GET', `/admin/orgs/org_acme/logs?logSource=${encodeURIComponent(NUL)}`, H);
    expect(logs.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', field: 'logSource' });
  });

  it('ingest still answers record by record: the batch is not refused whole', async () => {
    const res = await app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: [record({ message: 'fine' }), record({ message: NUL })] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 1, rejected: [{ index: 1, errors: ['contains a NUL character (\\u0000)'] }] });
  });
});
