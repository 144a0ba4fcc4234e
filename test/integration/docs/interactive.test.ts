/** The interactive API document at /docs: a public page whose spec route serves the OpenAPI document. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { familyMigrations } from '../../../src/modules/index.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';

describe('interactive API document', () => {
  let app: FastifyInstance;
  let store: Store;

  beforeAll(async () => {
    store = await openStore({ dataDir: 'memory://', migrations: familyMigrations });
    app = await buildApi({ config: loadConfig({ DATA_DIR: 'memory://' }), store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: async () => {} } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
  });

  it('answers /docs with the HTML page, without a credential', async () => {
    const res = await app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
    expect(res.body).toContain('swagger-ui');
    // The page's script and style load too.
    for (const asset of ['/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js']) {
      const got = await app.inject({ method: 'GET', url: asset });
      expect(got.statusCode, asset).toBe(200);
    }
  });

  it('serves the same OpenAPI document at /docs/json as at /docs/openapi.json', async () => {
    const spec = await app.inject({ method: 'GET', url: '/docs/json' });
    expect(spec.statusCode).toBe(200);
    expect(spec.headers['content-type']).toMatch(/^application\/json/);
    const doc = spec.json() as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.paths).toHaveProperty('/admin/orgs/{orgId}/log-drains');
    const direct = (await app.inject({ method: 'GET', url: '/docs/openapi.json' })).json();
    expect(doc).toEqual(direct);
    // The page's own routes are not operations of the API.
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).toEqual([]);
  });

  it('keeps every other route guarded: a family route without a credential is refused', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/orgs/org_acme/log-drains' });
    expect(res.statusCode).toBe(401);
  });
});
