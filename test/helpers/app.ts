/**
 * Starts logdrain in-process on an ephemeral port, configured the way an operator would, in one of
 * two modes: `embedded` (PGlite in memory, the embedded queue: `npm start`) or `kafka-postgres`
 * (a fresh Postgres database and a librdkafka broker of its own; `start` then runs as production
 * does, a `serve` and a `worker` on their own connections). The mode is LOGDRAIN_TEST_MODE's
 * unless given: the route suites run in both (vitest.config.ts).
 */
import { expect } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startMockBroker } from './broker.js';
import { createTestDatabase } from './postgres.js';
import { createKafkaSink } from '../../src/source/kafka-sink.js';
import { loadConfig } from '../../src/config/config.js';
import { run, type Role, type Running } from '../../src/commands/run.js';
import { createWriteStream } from 'node:fs';
import { basename } from 'node:path';
import { createLogger, type Logger } from '../../src/telemetry/logger.js';

export const SEED_FIXTURE = new URL('../fixtures/seed-acme.json', import.meta.url).pathname;

export interface TestApp extends Running {
  base: string;
  /** Raw messages straight into the worker's source (the embedded queue or the Kafka topic), past the ingest route's checks. */
  writeRaw(messages: readonly { orgId: string; payload: string }[]): Promise<void>;
  /** Where the worker's metrics are read: the app's own /metrics, or the worker's listener in production mode. */
  workerMetricsUrl: string;
  request(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
}

/** The last event lines (debug and up) of the in-process apps of this test file, printed when a test fails (failure-logs.ts). */
const recent: string[] = [];
const RECENT_MAX = 400;
export const recentAppLogs = (): readonly string[] => recent;

/**
 * Debug into a ring of recent event lines (API request lines left out), and
 * also into `<TEST_LOG_DIR>/<file>.log` when TEST_LOG_DIR names a directory.
 */
export function testLogger(): Logger {
  const dir = process.env.TEST_LOG_DIR;
  const file = dir ? createWriteStream(`${dir}/${basename(expect.getState().testPath ?? 'app')}.log`, { flags: 'a' }) : undefined;
  return createLogger('debug', 'test-app', {
    write(line: string) {
      file?.write(line);
      if (!line.includes('"event":')) return;
      recent.push(line.length > 600 ? `${line.slice(0, 600)}...` : line.trimEnd());
      if (recent.length > RECENT_MAX) recent.splice(0, recent.length - RECENT_MAX);
    },
  });
}

export type TestMode = 'embedded' | 'kafka-postgres';

export const TEST_MODE: TestMode = process.env.LOGDRAIN_TEST_MODE === 'kafka-postgres' ? 'kafka-postgres' : 'embedded';

export async function startApp(env: Record<string, string>, role: Role = 'start', logger: Logger = testLogger(), mode: TestMode = TEST_MODE): Promise<TestApp> {
  const defaults = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: 'memory://', SEED_FILE: SEED_FIXTURE, BATCH_LINGER_MS: '100', DRAIN_REFRESH_MS: '100' };
  // A test that names its own store or broker runs as it says, whatever the mode.
  const production = mode === 'kafka-postgres' && role === 'start' && !env.DATABASE_URL && !env.KAFKA_BROKERS
    ? await runProduction({ ...defaults, ...env }, logger)
    : undefined;
  const running = production ?? (await run(role, loadConfig({ ...defaults, ...env }), logger));
  const base = `http://127.0.0.1:${running.port}`;
  return {
    ...running,
    base,
    writeRaw: production?.writeRaw ?? ((messages) => running.store.queue.enqueue(messages)),
    workerMetricsUrl: production?.workerMetricsUrl ?? `${base}/metrics`,
    async request(method, path, opts = {}) {
      const { headers, body } = requestParts(opts);
      const res = await fetch(base + path, { method, headers, body });
      return { status: res.status, body: answerBody(await res.text()), headers: res.headers };
    },
  };
}

export type RequestOptions = NonNullable<Parameters<TestApp['request']>[2]>;

/** A request's headers and body as the suites send them: the key as a bearer token, an object body as JSON. */
export function requestParts(opts: RequestOptions): { headers: Record<string, string>; body: string | undefined } {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  return { headers, body };
}

/** An answer's body as the suites read it: parsed JSON, the text when it is not JSON, undefined when empty. */
export function answerBody(text: string): unknown {
  try {
    return text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/**
 * `start` as production runs it: a fresh database and broker (one topic, four partitions), an API
 * (`serve`) and a worker (`worker`) on their own connections, stopped and disposed together.
 */
async function runProduction(env: Record<string, string>, logger: Logger): Promise<Running & Pick<TestApp, 'writeRaw' | 'workerMetricsUrl'>> {
  const db = await createTestDatabase();
  const topic = `agent-logs-${randomBytes(4).toString('hex')}`;
  const broker = await startMockBroker({ topics: [{ name: topic, partitions: 4 }] });
  const prod = {
    ...env, DATABASE_URL: db.url, KAFKA_BROKERS: broker.bootstrap, KAFKA_TOPIC: topic, KAFKA_GROUP_ID: `workers-${topic}`,
    KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '500', METRICS_PORT: '0',
  };
  const dispose = async () => {
    await broker.stop().catch(() => {});
    await db.drop().catch(() => {});
  };
  let api: Running | undefined;
  let worker: Running | undefined;
  try {
    // The API first: it applies the seed file the worker does not read.
    api = await run('serve', loadConfig(prod), logger);
    worker = await run('worker', loadConfig(prod), logger);
    // Ready as `start` is: once the worker's consumer has joined its group.
    await waitFor(async () => (await fetch(`http://127.0.0.1:${worker!.port}/readyz`)).status === 200, { timeoutMs: 60_000, what: 'the worker joined its group' });
  } catch (e) {
    await worker?.stop().catch(() => {});
    await api?.stop().catch(() => {});
    await dispose();
    throw e;
  }
  const { port, store } = api;
  const sink = await createKafkaSink({ brokers: broker.brokers, topic });
  let stopping: Promise<void> | undefined;
  return {
    port,
    store,
    writeRaw: (messages) => sink.write(messages),
    workerMetricsUrl: `http://127.0.0.1:${worker.port}/metrics`,
    stop() {
      stopping ??= (async () => {
        await sink.close().catch(() => {});
        await api.stop();
        await worker.stop();
        await dispose();
      })();
      return stopping;
    },
  };
}

/** Polls `probe` until it answers something other than undefined (false and 0 count as answers). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function waitFor<T>(fn: () => T | Promise<T>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? 'a condition'}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
