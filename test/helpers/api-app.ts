/**
 * The API alone (`buildApi`, no worker, no listener) over an in-memory PGlite store, with the
 * seed and settings startApp gives, answering through fastify's inject(): for the route suites
 * that check HTTP answers only. Without a process to boot, a socket to open or a worker to start
 * and stop, such a suite spends its time in its requests.
 *
 * In kafka-postgres mode it is startApp: the suites of both modes run there against the
 * production processes as before (vitest.config.ts).
 */
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { familyMigrations, familySeeds } from '../../src/modules/index.js';
import { openStore } from '../../src/store/store.js';
import { readSeedFile } from '../../src/seed/seed-file.js';
import { applySeed } from '../../src/seed/apply.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { buildApi } from '../../src/server.js';
import { answerBody, requestParts, SEED_FIXTURE, startApp, TEST_MODE, testLogger, type TestApp } from './app.js';

/** What a suite of HTTP answers uses of an app: its requests, its store, and its stop. startApp's apps are ones too. */
export type TestApi = Pick<TestApp, 'request' | 'store' | 'stop'>;

export async function startApi(env: Record<string, string> = {}): Promise<TestApi> {
  if (TEST_MODE === 'kafka-postgres') return startApp(env);
  // startApp's settings; the port and address are never bound here.
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: 'memory://', SEED_FILE: SEED_FIXTURE, BATCH_LINGER_MS: '100', DRAIN_REFRESH_MS: '100', ...env });
  const logger = testLogger();
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, encryptionKey: config.encryptionKey, migrations: familyMigrations });
  let app: FastifyInstance | undefined;
  try {
    if (config.seedFile) await applySeed(store.sql, await readSeedFile(config.seedFile, familySeeds));
    // `start`'s metrics (one process, API and worker), with no worker attached: nothing here sends.
    app = await buildApi({ config, store, logger, metrics: createMetrics('all', { drainLabels: config.metricsDrainLabels }), sink: { write: (records) => store.queue.enqueue(records) } });
    await app.ready();
  } catch (e) {
    await app?.close().catch(() => {});
    await store.close().catch(() => {});
    throw e;
  }
  const api = app;
  let stopping: Promise<void> | undefined;
  return {
    store,
    async request(method, path, opts = {}) {
      const { headers, body } = requestParts(opts);
      const res = await api.inject({ method: method as 'GET', url: path, headers, ...(body !== undefined ? { payload: body } : {}) });
      return { status: res.statusCode, body: answerBody(res.body), headers: headersOf(res.headers) };
    },
    stop() {
      stopping ??= (async () => {
        await api.close();
        await store.close();
      })();
      return stopping;
    },
  };
}

/** inject()'s header record as the Headers object fetch answers with. */
function headersOf(record: Record<string, string | string[] | number | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(record)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, String(v));
  }
  return headers;
}
