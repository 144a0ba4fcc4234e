/**
 * The replay routes' requests (docs/api.md#drain-replays): every body, query and path parameter
 * validated with the drain family's codes, the window's bounds (the platform copy's retention, 7
 * days wide), the scope, the organization's replay bucket. Delivery is the engine suite's
 * (test/integration/engine/replay.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../../helpers/app.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('drain replay routes', () => {
  let app: TestApp;
  let drainId: string;

  beforeAll(async () => {
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', LOG_RETENTION_DAYS: '30', DRAIN_REPLAY_RATE_LIMIT_PER_HOUR: '1000',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
    const res = await app.request('POST', ORG, { token: T, body: { name: 'replay-routes', type: 'http', endpoint: 'https://localhost:9/r' } });
    expect(res.status).toBe(201);
    drainId = res.body.id;
  }, 300_000);
  afterAll(async () => {
    await app?.stop();
  });

  const post = (body: unknown, token = T, id = drainId) => app.request('POST', `${ORG}/${id}/replays`, { token, body });
  const refused = (res: { status: number; body: any }, field: string, words?: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe('DRAIN_VALIDATION_FAILED');
    expect(res.body.field).toBe(field);
    if (words) expect(String(res.body.message)).toMatch(words);
  };

  it('validates the body: its shape, each bound\'s form and calendar, their order', async () => {
    refused(await post({ until: '1h' }), 'since', /required/);
    refused(await post({ since: '1h' }), 'until', /required/);
    refused(await post({ since: '1h', until: '0s', speed: 2 }), 'speed', /not a replay field/);
    refused(await post('[1]'), 'body');
    refused(await post({ since: 'yesterday', until: '0s' }), 'since', /ISO 8601/);
    refused(await post({ since: 5, until: '0s' }), 'since');
    refused(await post({ since: null, until: '0s' }), 'since', /must not be null/);
    refused(await post({ since: '2026-02-30', until: '0s' }), 'since', /ISO 8601/);
    refused(await post({ since: '1h', until: '2026-13-01T00:00:00Z' }), 'until', /ISO 8601/);
    refused(await post({ since: '1h', until: '2h' }), 'since', /after until/);
  });

  it('bounds the window: within the platform copy\'s retention, at most 7 days wide', async () => {
    refused(await post({ since: '31d', until: '30d' }), 'since', /retention \(30 days\)/);
    refused(await post({ since: '10d', until: '2d' }), 'until', /at most 7 days/);
    refused(await post({ since: '0001-01-01', until: '0s' }), 'since', /must lie between/);
  });

  it('answers 409 for a drain not verified; 404 for an unknown drain or replay', async () => {
    const res = await post({ since: '7d', until: '0s' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('DRAIN_NOT_VERIFIED');
    const none = await post({ since: '1h', until: '0s' }, T, 'drn_nope');
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('DRAIN_NOT_FOUND');
    for (const replayId of ['rpl_nope', 'bad%20id']) {
      for (const method of ['GET', 'DELETE']) {
        const r = await app.request(method, `${ORG}/${drainId}/replays/${replayId}`, { token: T });
        expect(r.status).toBe(404);
        expect(r.body.code).toBe('DRAIN_REPLAY_NOT_FOUND');
      }
    }
  });

  it('lists the drain\'s replays with a validated limit and cursor', async () => {
    const ok = await app.request('GET', `${ORG}/${drainId}/replays`, { token: T });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ replays: [], nextCursor: null });
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=***', 'cursor=abc']) {
      const r = await app.request('GET', `${ORG}/${drainId}/replays?${q}`, { token: T });
      expect(r.status, q).toBe(400);
      expect(r.body.field, q).toBe(q.split('=')[0]);
    }
  });

  it('needs logs:manage', async () => {
    const res = await post({ since: '1h', until: '0s' }, 'lk_acme_ingest');
    expect(res.status).toBe(403);
    const list = await app.request('GET', `${ORG}/${drainId}/replays`, { token: 'lk_acme_ingest' });
    expect(list.status).toBe(403);
  });

  it('counts requests in the organization\'s replay bucket, apart from the drain routes\' budgets', async () => {
    // Its own small budget on the embedded store: the bucket is the kernel's, whatever the store.
    const limited = await startApp({ DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', DRAIN_REPLAY_RATE_LIMIT_PER_HOUR: '2' }, 'start', undefined, 'embedded');
    try {
      const d = await limited.request('POST', '/admin/orgs/org_globex/log-drains', { token: 'lk_globex_manage', body: { name: 'rl', type: 'http', endpoint: 'https://localhost:9/r' } });
      const at = (body: unknown) => limited.request('POST', `/admin/orgs/org_globex/log-drains/${d.body.id}/replays`, { token: 'lk_globex_manage', body });
      expect((await at({ since: '1h', until: '0s' })).status).toBe(409);
      const second = await at({ since: '1h', until: '0s' });
      expect(second.status).toBe(409);
      expect(second.headers.get('x-ratelimit-limit-log-drains-replay')).toBe('2');
      const third = await at({ since: '1h', until: '0s' });
      expect(third.status).toBe(429);
      expect(third.body.code).toBe('DRAIN_REPLAY_RATE_LIMITED');
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      // Reads and other drain routes keep their own budgets.
      expect((await limited.request('GET', `/admin/orgs/org_globex/log-drains/${d.body.id}/replays`, { token: 'lk_globex_manage' })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  }, 180_000);
});
