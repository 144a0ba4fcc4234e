/**
 * An API on a real socket whose chosen route tells the test when its body is about to be read (a
 * preParsing hook), and a client that sends the headers and part of a body, then hangs up once the
 * body is being read: what a client aborting mid-body does. The store is PGlite in memory, or a
 * fresh Postgres database in the kafka-postgres project; the API's event lines are kept.
 */
import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/server.js';
import { loadConfig } from '../../src/config/config.js';
import { openStore, type Store } from '../../src/store/store.js';
import { familyMigrations, familySeeds } from '../../src/modules/index.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { readSeedFile } from '../../src/seed/seed-file.js';
import { applySeed } from '../../src/seed/apply.js';
import { TEST_MODE } from './app.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';

export interface AbortingApi {
  app: FastifyInstance;
  store: Store;
  base: string;
  /** The API's event lines, in order. */
  events: { event?: string; reqId?: string }[];
  /**
   * Sends `head` (the request line and headers, each ending in CRLF, without the blank line), a
   * Content-Length for the whole `body` and its first half, then destroys the socket once the
   * route is about to read the body: the hang-up reaches the body reader.
   */
  abortMidBody(head: string, body: string): Promise<void>;
  close(): Promise<void>;
}

export async function startAbortingApi(opts: { method: string; url: string; seedFile: string; env?: Record<string, string> }): Promise<AbortingApi> {
  const config = loadConfig({ DATA_DIR: 'memory://', ...opts.env });
  const db: TestDatabase | undefined = TEST_MODE === 'kafka-postgres' ? await createTestDatabase() : undefined;
  const store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations } : { dataDir: 'memory://', migrations: familyMigrations });
  await applySeed(store.sql, await readSeedFile(opts.seedFile, familySeeds));
  const events: AbortingApi['events'] = [];
  const logger = createLogger('debug', 'test', { write: (line: string) => void events.push(JSON.parse(line)) });
  /** Called when the route's body is about to be read. */
  let reading: (() => void) | undefined;
  const app = await buildApi({
    config, store, logger, metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) },
    onRoute(route) {
      if (route.method !== opts.method || route.url !== opts.url) return;
      const own = route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing];
      route.preParsing = [...own, async (_req, _reply, payload) => {
        reading?.();
        return payload;
      }];
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return {
    app,
    store,
    base: `http://127.0.0.1:${port}`,
    events,
    async abortMidBody(head, body) {
      const bodyRead = new Promise<void>((resolve) => (reading = resolve));
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, body.length / 2)}`);
      // Authenticated and about to read the body: the hang-up now reaches the body reader.
      await bodyRead;
      reading = undefined;
      socket.destroy();
    },
    async close() {
      await app.close();
      await store.close();
      await db?.drop();
    },
  };
}
