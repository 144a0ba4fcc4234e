/**
 * A drain change holds for every record accepted after its answer, in both
 * setups operators run: embedded (`npm start`) and Kafka + Postgres (an API
 * and a worker on their own connections). The worker's periodic refresh is
 * set far longer than the test and change notifications are off, so only
 * the check each fetch makes before routing can explain what arrives: a
 * worker that learned of changes by polling fails every test here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startApp, waitFor, type TestApp, type TestMode } from '../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, records } from '../../helpers/records.js';
import type { ReceivedRequest } from '../../../src/devtools/https-receiver.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';
const MODES: TestMode[] = ['embedded', 'kafka-postgres'];

describe.each(MODES)('drain changes apply to every record accepted after the answer (%s)', (mode) => {
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath,
      DRAIN_REFRESH_MS: '600000', DRAIN_CONFIG_LISTEN: 'false', HEARTBEAT_INTERVAL_MS: '0', BATCH_LINGER_MS: '50',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    }, 'start', undefined, mode);
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const at = (path: string): ReceivedRequest[] => receiver.batches().filter((r) => r.path === path);
  const idsAt = (path: string): string[] => at(path).flatMap((r) => parseBatch(r).records.map((x) => x.id));
  const get = async (id: string) => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;
  const ids = (recs: { id: string }[]) => recs.map((r) => r.id);

  async function verified(path: string, extra: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
    const created = await app.request('POST', ORG, { token: T, body: { name: path.slice(1), type: 'http', endpoint: `${receiver.url}${path}`, format: 'json', minSeverity: 'debug', ...extra } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const v = await app.request('POST', `${ORG}/${created.body.id}/verify`, { token: T });
    expect(v.status, JSON.stringify(v.body)).toBe(202);
    await waitFor(async () => (await get(created.body.id)).state === 'healthy', { what: 'verified' });
    return created.body as { id: string; secret: string };
  }
  const remove = async (id: string) => expect((await app.request('DELETE', `${ORG}/${id}`, { token: T })).status).toBe(204);
  const parked = async (id: string, n: number) => waitFor(async () => (await get(id)).health.backlog === n, { what: `${n} parked records` });

  it('delivers every record to a drain fed the moment its verification answered', async () => {
    const d = await verified('/fresh');
    const fed = records(100);
    await ingest(app, fed);
    await waitFor(() => idsAt('/fresh').length >= 100, { what: 'the hundred records' });
    expect(new Set(idsAt('/fresh'))).toEqual(new Set(ids(fed)));
    await remove(d.id);
  });

  it('sends nothing accepted after an endpoint change to the old endpoint; the new one gets it once verified', async () => {
    const d = await verified('/old');
    const before = records(5);
    await ingest(app, before);
    await waitFor(() => idsAt('/old').length === 5, { what: 'the records before the change' });
    const patched = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { endpoint: `${receiver.url}/new` } });
    expect(patched.body.state).toBe('pending_verification');
    const after = records(20);
    await ingest(app, after);
    // Routed by the change: parked until the new endpoint is verified.
    await parked(d.id, 20);
    expect(idsAt('/old')).toEqual(ids(before));
    await app.request('POST', `${ORG}/${d.id}/verify`, { token: T });
    await waitFor(() => idsAt('/new').length === 20, { what: 'the parked records at the new endpoint' });
    expect(new Set(idsAt('/new'))).toEqual(new Set(ids(after)));
    expect(idsAt('/old')).toEqual(ids(before));
    await remove(d.id);
  });

  it('parks every record accepted after a pause; they go out after the resume', async () => {
    const d = await verified('/paused');
    expect((await app.request('POST', `${ORG}/${d.id}/pause`, { token: T })).body.state).toBe('paused');
    const after = records(30);
    await ingest(app, after);
    await parked(d.id, 30);
    expect(idsAt('/paused')).toEqual([]);
    await app.request('POST', `${ORG}/${d.id}/resume`, { token: T });
    await waitFor(() => idsAt('/paused').length === 30, { what: 'the records after the resume' });
    await remove(d.id);
  });

  it('signs every batch of records accepted after a rotation with the new secret first', async () => {
    const d = await verified('/rotated');
    const rot = await app.request('POST', `${ORG}/${d.id}/rotate-secret`, { token: T });
    expect(rot.status).toBe(200);
    const after = records(40);
    await ingest(app, after);
    await waitFor(() => idsAt('/rotated').length === 40, { what: 'the records after the rotation' });
    for (const got of at('/rotated')) {
      const entries = String(got.headers['webhook-signature']).split(' ');
      expect(entries).toHaveLength(2);
      const only = (i: number) => ({ 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': entries[i]! });
      expect(() => new Webhook(rot.body.secret).verify(got.body.toString(), only(0))).not.toThrow();
      expect(() => new Webhook(d.secret).verify(got.body.toString(), only(1))).not.toThrow();
    }
    await remove(d.id);
  });

  it('scrubs every record accepted after a scrub rule is patched in', async () => {
    const d = await verified('/scrubbed');
    const patched = await app.request('PATCH', `${ORG}/${d.id}`, { token: T, body: { scrubRules: [{ id: 'token', pattern: 'tok_[0-9]{6}' }] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const after = records(30, { message: 'the caller sent tok_123456 in the clear' });
    await ingest(app, after);
    await waitFor(() => idsAt('/scrubbed').length === 30, { what: 'the records after the patch' });
    const bodies = at('/scrubbed').flatMap((r) => parseBatch(r).records.map((x) => String(x.body)));
    expect(bodies).toHaveLength(30);
    for (const b of bodies) expect(b).not.toContain('tok_123456');
    await remove(d.id);
  });

  it('sends nothing accepted after a delete (checked once the worker has flushed everything at its stop)', async () => {
    const gone = await verified('/deleted');
    const kept = await verified('/kept');
    const before = records(5);
    await ingest(app, before);
    await waitFor(() => idsAt('/deleted').length === 5 && idsAt('/kept').length === 5, { what: 'the records before the delete' });
    await remove(gone.id);
    const after = records(25);
    await ingest(app, after);
    await waitFor(() => idsAt('/kept').length === 30, { what: 'the records after the delete at the kept drain' });
    // A stop sends every open batch: records routed to the deleted drain would arrive by then.
    await app.stop();
    expect(idsAt('/deleted')).toEqual(ids(before));
    void kept;
  });
});
