/**
 * Read-your-writes in the embedded setup (`logdrain start`): a record accepted
 * after a drain change was answered is routed by that change, however long
 * DRAIN_REFRESH_MS is. The worker checks the stored configuration before it
 * routes each chunk of the ingest queue. (Kafka workers see changes within
 * DRAIN_REFRESH_MS: the platform's records carry no order against API calls.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('embedded setup: drain changes apply to the next record', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    // A refresh period far longer than the test: only the per-chunk check can explain what arrives.
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, DRAIN_REFRESH_MS: '600000', HEARTBEAT_INTERVAL_MS: '0',
      BATCH_LINGER_MS: '30', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const idsAt = (path: string) => receiver.batches().filter((r) => r.path === path).flatMap((r) => parseBatch(r).records.map((x) => x.id));
  const get = async (id: string) => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;

  it('parks records sent right after a create, delivers records sent right after verification, and stops at a delete', async () => {
    const created = await app.request('POST', ORG, { token: T, body: { name: 'sync', type: 'http', endpoint: `${receiver.url}/sync`, format: 'ndjson', minSeverity: 'debug' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // Unverified: the worker knows the drain at once and parks its records.
    const early = records(3);
    await ingest(app, early);
    await waitFor(async () => (await get(id)).health.backlog === 3, { what: "three parked records" });

    await app.request('POST', `${ORG}/${id}/verify`, { token: T });
    await waitFor(async () => (await get(id)).state === 'healthy', { what: 'healthy' });
    const live = records(4);
    await ingest(app, live);
    await waitFor(() => idsAt('/sync').length === 7, { what: 'the parked and the live records' });
    // In order: records sent after verification queue behind the ones parked before it.
    expect(idsAt('/sync')).toEqual([...early, ...live].map((r) => r.id));

    expect((await app.request('DELETE', `${ORG}/${id}`, { token: T })).status).toBe(204);
    const after = records(2);
    await ingest(app, after);
    // A later drain's parked marker shows the queue moved past them; none reached the deleted drain.
    const next = await app.request('POST', ORG, { token: T, body: { name: 'next', type: 'http', endpoint: `${receiver.url}/next`, minSeverity: 'debug' } });
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    const marker = records(1);
    await ingest(app, marker);
    // (The records sent after the delete may be routed to the next drain too: what counts is the state at routing.)
    const parkedIds = async () => (await app.store.sql.query<{ record_id: string }>('select record_id from drain_backlog where drain_id = $1', [next.body.id])).map((r) => r.record_id);
    await waitFor(async () => (await parkedIds()).includes(marker[0]!.id), { what: 'the marker parked for the next drain' });
    expect(idsAt('/sync')).toHaveLength(7);
    await app.request('DELETE', `${ORG}/${next.body.id}`, { token: T });
  });
});
