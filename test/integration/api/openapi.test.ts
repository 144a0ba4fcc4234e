/** The OpenAPI document at /docs/openapi.json agrees with the routes the server registers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
// The API serves every family: their tables too.
import { familyMigrations } from '../../../src/modules/index.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';

/** Every drain and log read route of spec 01 part 4, plus ours. */
const EXPECTED: [string, string][] = [
  ['get', '/admin/orgs/{orgId}/log-drains'],
  ['post', '/admin/orgs/{orgId}/log-drains'],
  ['get', '/admin/orgs/{orgId}/log-drains/{drainId}'],
  ['patch', '/admin/orgs/{orgId}/log-drains/{drainId}'],
  ['delete', '/admin/orgs/{orgId}/log-drains/{drainId}'],
  ['post', '/admin/orgs/{orgId}/log-drains/{drainId}/test'],
  ['post', '/admin/orgs/{orgId}/log-drains/{drainId}/verify'],
  ['post', '/admin/orgs/{orgId}/log-drains/{drainId}/pause'],
  ['post', '/admin/orgs/{orgId}/log-drains/{drainId}/resume'],
  ['post', '/admin/orgs/{orgId}/log-drains/{drainId}/rotate-secret'],
  ['get', '/admin/orgs/{orgId}/log-drains/{drainId}/deliveries'],
  ['get', '/admin/orgs/{orgId}/log-drains-audit'],
  ['post', '/internal/records'],
  ['get', '/developer/agents/{agentId}/logs'],
  ['get', '/admin/orgs/{orgId}/logs'],
  ['get', '/admin/orgs/{orgId}/logs/download'],
];

describe('OpenAPI document', () => {
  let app: FastifyInstance;
  let store: Store;
  let doc: { openapi: string; paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> };

  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://' });
    store = await openStore({ dataDir: 'memory://', migrations: familyMigrations });
    app = await buildApi({
      config, store, logger: silentLogger(), metrics: createMetrics('api'),
      sink: { write: async () => {} },
    });
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/docs/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
  });

  it('is OpenAPI 3 and documents every drain route of the spec', () => {
    expect(doc.openapi).toMatch(/^3\./);
    for (const [method, path] of EXPECTED) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
  });

  it('documents only routes the server has registered, with their answers', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => [m, path] as const));
    expect(documented.length).toBeGreaterThanOrEqual(EXPECTED.length);
    for (const [method, path] of documented) {
      const url = path.replace(/\{(\w+)\}/g, ':$1');
      expect(app.hasRoute({ method: method.toUpperCase() as 'GET', url }), `${method} ${path}`).toBe(true);
    }
    expect(Object.keys(doc.paths['/admin/orgs/{orgId}/log-drains']!.post!.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '409', '422', '429']));
  });
});
