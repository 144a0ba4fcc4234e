/**
 * A client that hangs up mid-body on a workflow control route: the body reader's error (the
 * request's own socket, `aborted`, ECONNRESET) says nothing about the store, so it is not logged
 * or answered as the store being unavailable, and the server goes on serving. Through a real
 * socket: the headers and half the body, then the socket destroyed once the body is being read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { familyMigrations, familySeeds } from '../../../src/modules/index.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { createLogger } from '../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../src/seed/seed-file.js';
import { applySeed } from '../../../src/seed/apply.js';
import { TEST_MODE, waitFor } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { WF_BASE, writeWorkflowsSeed } from '../../helpers/workflows-seed.js';

const START = `${WF_BASE}/runs`;

describe('a client aborting mid-body on a workflow control route', () => {
  let app: FastifyInstance;
  let store: Store;
  let db: TestDatabase | undefined;
  let base: string;
  const events: { event?: string; reqId?: string }[] = [];
  /** Called when the start route's body is about to be read (its preParsing hook). */
  let reading: (() => void) | undefined;

  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://', WORKFLOW_EXECUTOR: 'false' });
    if (TEST_MODE === 'kafka-postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations } : { dataDir: 'memory://', migrations: familyMigrations });
    await applySeed(store.sql, await readSeedFile(writeWorkflowsSeed(), familySeeds));
    const logger = createLogger('debug', 'test', { write: (line: string) => void events.push(JSON.parse(line)) });
    app = await buildApi({
      config, store, logger, metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) },
      onRoute(route) {
        if (route.method !== 'POST' || route.url !== '/workflows/:agentId/runs') return;
        const own = route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing];
        route.preParsing = [...own, async (_req, _reply, payload) => {
          reading?.();
          return payload;
        }];
      },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await db?.drop();
  });

  it('is not taken for the store being unavailable, and the server keeps serving', async () => {
    const body = JSON.stringify({ workflowName: 'slow', input: { note: 'x'.repeat(400) } });
    const bodyRead = new Promise<void>((resolve) => (reading = resolve));
    const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST ${START} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer lk_wf_all\r\nContent-Type: application/json\r\n` +
      `Idempotency-Key: aborted-1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, body.length / 2)}`,
    );
    // Authenticated and about to read the body: the hang-up now reaches the body reader.
    await bodyRead;
    reading = undefined;
    socket.destroy();

    const gone = await waitFor(() => events.find((e) => e.event === 'api.client_gone'), { what: 'the aborted request to reach the error handler' });
    expect(events.filter((e) => e.reqId === gone.reqId).map((e) => e.event)).not.toContain('api.store_unavailable');
    expect(events.map((e) => e.event)).not.toContain('api.store_unavailable');

    const started = await fetch(base + START, {
      method: 'POST', headers: { authorization: 'Bearer lk_wf_all', 'content-type': 'application/json', 'idempotency-key': 'after-abort-1' },
      body: JSON.stringify({ workflowName: 'slow' }),
    });
    expect(started.status).toBe(202);
    // The aborted start wrote nothing: its key is free and makes a run of its own.
    const again = await fetch(base + START, {
      method: 'POST', headers: { authorization: 'Bearer lk_wf_all', 'content-type': 'application/json', 'idempotency-key': 'aborted-1' },
      body: JSON.stringify({ workflowName: 'slow' }),
    });
    expect(again.status).toBe(202);
  });
});
