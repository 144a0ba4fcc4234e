/**
 * The pieces a Kafka integration test needs: a librdkafka mock broker with a
 * fresh topic, a fresh Postgres database seeded through a serving API, a
 * self-signed HTTPS receiver, and healthy (verified) drains pointing at it.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { startMockBroker, type MockBroker } from './broker.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { startReceiver, parseBatch, type HttpsReceiver } from './receiver.js';
import { startApp, waitFor, type TestApp } from './app.js';
import { syntheticRecords } from '../../src/devtools/synthetic.js';
import { loadConfig } from '../../src/config/config.js';
import { createTransport } from '../../src/deliver/transport.js';
import { startProbeWorker } from './probe-worker.js';

export interface KafkaFixture {
  broker: MockBroker;
  topic: string;
  db: TestDatabase;
  receiver: HttpsReceiver;
  api: TestApp;
  /** Environment for a `logdrain worker` child process of this fixture. */
  workerEnv: Record<string, string>;
  createVerifiedDrain(orgId: string, token: string, body: Record<string, unknown>): Promise<string>;
  producer(): Promise<Producer>;
  /** Batches (not verifications) answered 200 after `ms`: a stop or a rebalance then finds deliveries in flight. */
  answerSlowly(ms: number): void;
  /** Record ids the destination path accepted (answered 2xx), with how often each arrived. */
  receivedIds(path?: string): Map<string, number>;
  close(): Promise<void>;
}

export async function startKafkaFixture(opts: { partitions?: number; brokers?: number } = {}): Promise<KafkaFixture> {
  const topic = `agent-logs-${randomBytes(4).toString('hex')}`;
  const broker = await startMockBroker({ brokers: opts.brokers ?? 1, topics: [{ name: topic, partitions: opts.partitions ?? 4 }] });
  const db = await createTestDatabase();
  const receiver = await startReceiver();
  const common = { DATABASE_URL: db.url, DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath };
  const api = await startApp(common, 'serve');
  const producers: Producer[] = [];
  const workerEnv = {
    ...common,
    KAFKA_BROKERS: broker.bootstrap,
    KAFKA_TOPIC: topic,
    KAFKA_GROUP_ID: `workers-${topic}`,
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    KAFKA_HEARTBEAT_INTERVAL_MS: '500',
    BATCH_LINGER_MS: '100',
    BATCH_MAX_RECORDS: '100',
    DRAIN_REFRESH_MS: '200',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    SHUTDOWN_TIMEOUT_MS: '10000',
  };
  return {
    broker, topic, db, receiver, api, workerEnv,
    async createVerifiedDrain(orgId, token, body) {
      const created = await api.request('POST', `/admin/orgs/${orgId}/log-drains`, { token, body });
      if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
      // The API only enqueues the verification: a worker sends it. The test's workers start later,
      // so a probe runner stands in for the first worker for as long as the verification takes.
      const transport = createTransport({ allowHosts: ['localhost'], extraCaCerts: receiver.ca, timeoutMs: 10_000 });
      const prober = await startProbeWorker({ config: loadConfig({ PROBE_POLL_MS: '50' }), store: api.store, transport, owner: 'fixture-prober' });
      try {
        await api.request('POST', `/admin/orgs/${orgId}/log-drains/${created.body.id}/verify`, { token });
        await waitFor(async () => (await api.request('GET', `/admin/orgs/${orgId}/log-drains/${created.body.id}`, { token })).body.state === 'healthy', { what: 'verified drain' });
      } finally {
        await prober.stop();
        await transport.close();
      }
      return created.body.id as string;
    },
    answerSlowly(ms) {
      receiver.respondWith((r, res) => {
        if (r.headers['x-svc-verify']) return false;
        setTimeout(() => res.writeHead(200).end(), ms);
        return true;
      });
    },
    async producer() {
      const p = new Kafka({ clientId: 'test-producer', brokers: broker.brokers, logLevel: logLevel.NOTHING }).producer();
      await p.connect();
      producers.push(p);
      return p;
    },
    receivedIds(path) {
      const counts = new Map<string, number>();
      for (const r of receiver.accepted()) {
        if (path && r.path !== path) continue;
        for (const rec of parseBatch(r).records) counts.set(rec.id, (counts.get(rec.id) ?? 0) + 1);
      }
      return counts;
    },
    async close() {
      for (const p of producers) await p.disconnect().catch(() => {});
      await api.stop().catch(() => {});
      await receiver.close().catch(() => {});
      await broker.stop().catch(() => {});
      await db.drop().catch(() => {});
    },
  };
}

/** Produces `count` synthetic records for one org in chunks, pausing between chunks: a stream, not a burst. */
export async function produceStream(
  producer: Producer,
  topic: string,
  opts: {
    count: number; orgId: string; agents: { id: string; name: string }[]; idPrefix: string; chunk?: number; pauseMs?: number; junkEvery?: number;
    /** Production waits before record `at` until `open` settles: the stream is certain to be unfinished until then. */
    gate?: { at: number; open: Promise<unknown> };
  },
): Promise<string[]> {
  const ids: string[] = [];
  const all = [...syntheticRecords(opts.count, { orgs: [{ orgId: opts.orgId, agents: opts.agents }], idPrefix: opts.idPrefix })];
  const chunk = opts.chunk ?? 200;
  for (let i = 0; i < all.length; i += chunk) {
    if (opts.gate && i >= opts.gate.at) await opts.gate.open;
    const slice = all.slice(i, i + chunk);
    const messages = slice.map((r) => ({ key: r.orgId, value: JSON.stringify({ ...r, severity: r.severity === 'debug' ? 'info' : r.severity }) }));
    if (opts.junkEvery) messages.push({ key: opts.orgId, value: '{"this is": not json' });
    await producer.send({ topic, messages });
    ids.push(...slice.map((r) => r.id));
    if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
  }
  return ids;
}
