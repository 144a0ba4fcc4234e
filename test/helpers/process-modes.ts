/**
 * Real `logdrain` processes in the test mode (vitest.config.ts): on embedded defaults, or on a
 * fresh Postgres database and a librdkafka mock broker shared by the file's processes. Call inside
 * a describe: it registers the hooks that make the database and broker and kill what is left.
 */
import { afterAll, beforeAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import { SEED_FIXTURE, TEST_MODE } from './app.js';
import { spawnLogdrain, type LogdrainProcess } from './processes.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { startMockBroker, type MockBroker } from './broker.js';

export interface ProcessModes {
  /** The environment of a process listening (API and metrics) on `port`. */
  envFor(port: number): Record<string, string>;
  /** Spawns `role` on `port`; the file's afterAll kills it if it is still running. */
  spawn(role: string, port: number): LogdrainProcess;
}

export function processModes(groupPrefix: string): ProcessModes {
  let db: TestDatabase | undefined;
  let broker: MockBroker | undefined;
  let topic = '';
  const spawned: LogdrainProcess[] = [];

  beforeAll(async () => {
    if (TEST_MODE !== 'kafka-postgres') return;
    db = await createTestDatabase();
    topic = `agent-logs-${randomBytes(4).toString('hex')}`;
    broker = await startMockBroker({ topics: [{ name: topic, partitions: 2 }] });
  });
  afterAll(async () => {
    for (const p of spawned) p.kill('SIGKILL');
    await Promise.all(spawned.map((p) => p.exited));
    await broker?.stop().catch(() => {});
    await db?.drop().catch(() => {});
  });

  function envFor(port: number): Record<string, string> {
    const common = { HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: String(port), SEED_FILE: SEED_FIXTURE, SHUTDOWN_TIMEOUT_MS: '30000' };
    if (TEST_MODE !== 'kafka-postgres') return { ...common, DATA_DIR: 'memory://' };
    return {
      ...common, DATABASE_URL: db!.url, KAFKA_BROKERS: broker!.bootstrap, KAFKA_TOPIC: topic,
      // A group of its own per process: one a member has just left takes a session timeout to join again.
      KAFKA_GROUP_ID: `${groupPrefix}-${randomBytes(4).toString('hex')}`, KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '500',
    };
  }

  return {
    envFor,
    spawn(role, port) {
      const p = spawnLogdrain([role], envFor(port));
      spawned.push(p);
      return p;
    },
  };
}
