/**
 * A drain mutation and its audit entry commit together at the REST layer:
 * when the audit write fails (a store whose audit writer is made to throw,
 * StoreOptions.auditWriter), the request fails and the drain is left as it
 * was; once the writer works again, the same request goes through. On both
 * stores; this file sets up its own (vitest.config.ts OWN_SETUP).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../../src/server.js';
import { loadConfig } from '../../../../src/config/config.js';
import { openStore, type Store } from '../../../../src/store/store.js';
import { insertAudit, type AuditWriter } from '../../../../src/store/unit-of-work.js';
import { createMetrics } from '../../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../../src/seed/seed-file.js';
import { applySeed } from '../../../../src/seed/apply.js';
import { SEED_FIXTURE } from '../../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const M = { authorization: 'Bearer lk_acme_manage' };

describe.each(['pglite', 'postgres'] as const)('drain mutations and their audit entries on %s', (kind) => {
  let app: FastifyInstance;
  let store: Store;
  let db: TestDatabase | undefined;
  /** Actions whose audit write fails, as a broken audit table would. */
  const failing = new Set<string>();
  const auditWriter: AuditWriter = async (tx, entry) => {
    if (failing.has(entry.action)) throw new Error(`audit write refused: ${entry.action}`);
    await insertAudit(tx, entry);
  };

  beforeAll(async () => {
    const config = loadConfig({
      DATA_DIR: 'memory://', DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost',
      DRAIN_RATE_LIMIT_READ_PER_MIN: '1000000', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '1000000',
    });
    if (kind === 'postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, auditWriter } : { dataDir: 'memory://', auditWriter });
    await applySeed(store.sql, await readSeedFile(SEED_FIXTURE));
    app = await buildApi({ config, store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await db?.drop();
  });

  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: M, ...(payload === undefined ? {} : { payload: payload as string }) });
  const actions = async (id: string) =>
    ((await inject('GET', `/admin/orgs/org_acme/log-drains-audit?drainId=${id}`)).json().entries as { action: string }[]).map((e) => e.action);

  it('leaves a drain unchanged when the audit entry of its PATCH cannot be written', async () => {
    const created = await inject('POST', ORG, { name: `atomic-${kind}`, type: 'http', endpoint: 'https://localhost:9/logs' });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const before = (await inject('GET', `${ORG}/${id}`)).json();
    const version = await store.drains.configVersion();

    failing.add('logs.drain.updated');
    try {
      const patched = await inject('PATCH', `${ORG}/${id}`, { name: `renamed-${kind}`, minSeverity: 'error' });
      expect(patched.statusCode).toBe(500);
      expect(patched.json()).toEqual({ statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' });
    } finally {
      failing.delete('logs.drain.updated');
    }
    expect((await inject('GET', `${ORG}/${id}`)).json()).toEqual(before);
    expect(await store.drains.configVersion()).toBe(version);
    expect(await actions(id)).toEqual(['logs.drain.created']);

    // The writer works again: the same PATCH goes through, with its entry.
    const patched = await inject('PATCH', `${ORG}/${id}`, { name: `renamed-${kind}`, minSeverity: 'error' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ name: `renamed-${kind}`, version: before.version + 1 });
    expect(await actions(id)).toEqual(['logs.drain.updated', 'logs.drain.created']);
  });

  it('creates, pauses and deletes nothing whose audit entry cannot be written', async () => {
    failing.add('logs.drain.created');
    try {
      expect((await inject('POST', ORG, { name: `never-${kind}`, type: 'http', endpoint: 'https://localhost:9/logs' })).statusCode).toBe(500);
    } finally {
      failing.delete('logs.drain.created');
    }
    const list = (await inject('GET', ORG)).json().drains as { name: string }[];
    expect(list.map((d) => d.name)).not.toContain(`never-${kind}`);

    const created = await inject('POST', ORG, { name: `kept-${kind}`, type: 'http', endpoint: 'https://localhost:9/logs' });
    const id = created.json().id as string;
    failing.add('logs.drain.paused');
    failing.add('logs.drain.deleted');
    try {
      expect((await inject('POST', `${ORG}/${id}/pause`)).statusCode).toBe(500);
      expect((await inject('DELETE', `${ORG}/${id}`)).statusCode).toBe(500);
    } finally {
      failing.clear();
    }
    expect((await inject('GET', `${ORG}/${id}`)).json()).toMatchObject({ id, state: 'pending_verification' });
    expect(await actions(id)).toEqual(['logs.drain.created']);
    expect((await inject('DELETE', `${ORG}/${id}`)).statusCode).toBe(204);
    expect((await inject('GET', `${ORG}/${id}`)).statusCode).toBe(404);
  });
});
