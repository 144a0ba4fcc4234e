/**
 * Production's split: a `serve` process sends nothing on a drain's behalf. Its
 * verify and test routes enqueue probes that wait until a `worker` process
 * (its own store connections, Kafka) claims and sends them; the API's /readyz
 * reports no accounting, having none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startMockBroker, type MockBroker } from '../../helpers/broker.js';
import { startReceiver, parseBatch, type HttpsReceiver } from '../../helpers/receiver.js';
import { run, type Running } from '../../../src/commands/run.js';
import { loadConfig } from '../../../src/config/config.js';
import { silentLogger } from '../../../src/telemetry/logger.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('probes behind a serve-only API', () => {
  let db: TestDatabase;
  let broker: MockBroker;
  let receiver: HttpsReceiver;
  let api: TestApp;
  let worker: Running | undefined;
  let common: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    const topic = `agent-logs-${randomBytes(4).toString('hex')}`;
    broker = await startMockBroker({ topics: [{ name: topic, partitions: 1 }] });
    receiver = await startReceiver();
    common = {
      DATABASE_URL: db.url, DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath,
      KAFKA_BROKERS: broker.bootstrap, KAFKA_TOPIC: topic, KAFKA_GROUP_ID: `workers-${topic}`,
      KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '500', METRICS_PORT: '0', HOST: '127.0.0.1', PORT: '0',
    };
    api = await startApp(common, 'serve');
  });
  afterAll(async () => {
    await worker?.stop().catch(() => {});
    await api?.stop().catch(() => {});
    await receiver?.close();
    await broker?.stop().catch(() => {});
    await db?.drop().catch(() => {});
  });

  it('answers /readyz without an accounting check: the API alone accounts nothing', async () => {
    const res = await api.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { store: true, consumer: true, shuttingDown: false } });
  });

  it('holds a verification until a worker starts, which sends it; a test batch then goes out under the answered batch id', async () => {
    const created = await api.request('POST', ORG, { token: T, body: { name: 'split', type: 'http', endpoint: `${receiver.url}/split` } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const v = await api.request('POST', `${ORG}/${id}/verify`, { token: T });
    expect(v.status).toBe(202);
    // Enqueued, not sent: the serve process has no delivery path.
    expect(await api.store.probes.pending()).toBe(1);
    expect(receiver.requests).toHaveLength(0);
    expect((await api.request('GET', `${ORG}/${id}`, { token: T })).body.state).toBe('pending_verification');

    worker = await run('worker', loadConfig(common), silentLogger());
    await waitFor(async () => (await api.request('GET', `${ORG}/${id}`, { token: T })).body.state === 'healthy', { what: 'verified by the worker', timeoutMs: 30_000 });
    expect(receiver.requests.filter((r) => r.path === '/split' && r.headers['x-svc-verify'])).toHaveLength(1);

    const sent = await api.request('POST', `${ORG}/${id}/test`, { token: T });
    expect(sent.status).toBe(202);
    const got = await waitFor(() => receiver.batches().find((r) => r.headers['x-svc-batch-id'] === sent.body.batchId), { what: 'the test batch' });
    expect(parseBatch(got).records.map((r) => r.eventName)).toEqual(['svc.drain.test']);
    const row = await waitFor(async () => {
      const r = await api.request('GET', `${ORG}/${id}/deliveries?kind=test`, { token: T });
      return (r.body.deliveries as { batchId: string; ok: boolean }[]).find((d) => d.batchId === sent.body.batchId);
    }, { what: 'the test delivery record' });
    expect(row.ok).toBe(true);
    await waitFor(async () => (await api.store.probes.pending()) === 0, { what: 'the probes removed' });
  });
});
