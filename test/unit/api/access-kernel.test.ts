/**
 * The access kernel: a route that declares no access cannot be registered
 * (the API does not start), and a public route is documented as needing no
 * credential while every guarded one needs the bearer token.
 */
import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { installAccess } from '../../../src/api/kernel/access.js';
import { isPerson, requirePerson } from '../../../src/api/kernel/auth.js';
import type { Store } from '../../../src/store/store.js';
import type { RateLimiter } from '../../../src/api/kernel/rate-limit.js';
import { buildApi } from '../../../src/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore } from '../../../src/store/store.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';

const deps = { store: {} as Store, limiter: {} as RateLimiter, deprecatedScopesSunset: new Date('2030-01-01T00:00:00Z') };

describe('access kernel', () => {
  it('refuses to register a route without an access declaration', async () => {
    const app = Fastify();
    installAccess(app, deps);
    app.get('/declared', { config: { access: { resource: 'public' } } }, async () => ({ ok: true }));
    let refused: unknown;
    try {
      app.get('/forgotten', async () => ({ open: true }));
      await app.ready();
    } catch (e) {
      refused = e;
    }
    expect(refused).toMatchObject({ code: 'ROUTE_ACCESS_UNDECLARED' });
    expect(String((refused as Error).message)).toContain('/forgotten');
    await app.close().catch(() => {});
  });

  it('refuses a route naming a scope no family declared', async () => {
    const app = Fastify();
    installAccess(app, deps);
    let refused: unknown;
    try {
      app.get('/typo/:orgId', { config: { access: { resource: 'org', scope: { required: 'logs:mange' } } } }, async () => ({}));
      await app.ready();
    } catch (e) {
      refused = e;
    }
    expect(refused).toMatchObject({ code: 'ROUTE_SCOPE_UNKNOWN' });
    await app.close().catch(() => {});
  });

  it('tells a person from a typed API credential: human-only actions refuse keys with APPROVAL_REQUIRES_HUMAN', () => {
    const key = { kind: 'api_key' as const, userId: 'u', keyOrgId: 'o', scopes: ['workflows:execute'], agentGrants: [], credentialId: 'k' };
    const legacy = { ...key, scopes: null };
    const session = { ...key, kind: 'session' as const, keyOrgId: undefined, scopes: null };
    expect(isPerson(key)).toBe(false);
    expect(isPerson(legacy)).toBe(true);
    expect(isPerson(session)).toBe(true);
    expect(() => requirePerson(key, 'resolve a step')).toThrow(expect.objectContaining({ statusCode: 403, code: 'APPROVAL_REQUIRES_HUMAN' }));
    expect(() => requirePerson(session, 'resolve a step')).not.toThrow();
  });

  it('refuses it inside a plugin too (a family registered later)', async () => {
    const app = Fastify();
    installAccess(app, deps);
    await expect(
      (async () => {
        await app.register(async (family) => {
          family.post('/family/thing', async () => ({}));
        });
        await app.ready();
      })(),
    ).rejects.toMatchObject({ code: 'ROUTE_ACCESS_UNDECLARED' });
    await app.close().catch(() => {});
  });

  it('documents public routes without a credential and guarded ones with the bearer token', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    const app = await buildApi({
      config: loadConfig({ DATA_DIR: 'memory://' }), store, logger: silentLogger(), metrics: createMetrics('api'),
      sink: { write: async () => {} },
    });
    try {
      await app.ready();
      const doc = (await app.inject({ method: 'GET', url: '/docs/openapi.json' })).json() as { security: unknown; paths: Record<string, Record<string, { security?: unknown[] }>> };
      expect(doc.security).toEqual([{ bearer: [] }]);
      for (const path of ['/healthz', '/readyz', '/metrics']) expect(doc.paths[path]?.get?.security, path).toEqual([]);
      expect(doc.paths['/admin/orgs/{orgId}/log-drains']?.get?.security).toBeUndefined();
      // The ingest route answers 202, and says so.
      expect(Object.keys((doc.paths['/internal/records']?.post as { responses: object }).responses)).toEqual(expect.arrayContaining(['202', '401', '403', '413']));
      expect(Object.keys((doc.paths['/internal/records']?.post as { responses: object }).responses)).not.toContain('200');
      // And the kernel enforces it: no credential, 401 before anything else.
      expect((await app.inject({ method: 'GET', url: '/admin/orgs/org_acme/log-drains' })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
