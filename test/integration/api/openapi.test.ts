/** The OpenAPI document at /docs/openapi.json agrees with the routes the server registers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
// The API serves every family: their tables too.
import { familyMigrations } from '../../../src/modules/index.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; additionalProperties?: unknown; items?: Schema };
type Operation = {
  parameters?: { in: string; name: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
  security?: unknown[];
  summary?: string;
  tags?: string[];
};

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
  ['get', '/developer/{agentId}/{skillId}/logs'],
  ['get', '/admin/orgs/{orgId}/logs'],
  ['get', '/admin/orgs/{orgId}/logs/download'],
];

describe('OpenAPI document', () => {
  let app: FastifyInstance;
  let store: Store;
  let doc: { openapi: string; paths: Record<string, Record<string, Operation>> };
  /** Every route the server registered (fastify's onRoute), HEAD twins left out. */
  const registered: { method: string; url: string; hidden: boolean }[] = [];

  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://' });
    store = await openStore({ dataDir: 'memory://', migrations: familyMigrations });
    app = await buildApi({
      config, store, logger: silentLogger(), metrics: createMetrics('api'),
      sink: { write: async () => {} },
      // Seen before the kernel's own hooks add to them: the route as the family declared it.
      onRoute: (route) => {
        for (const method of [route.method].flat()) {
          if (method !== 'HEAD') registered.push({ method, url: route.url, hidden: (route.schema as { hide?: boolean } | undefined)?.hide === true });
        }
      },
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

  it('gives every operation a summary and a tag, and describes the whole platform', () => {
    const missing = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).filter(([, op]) => !op.summary || !op.tags || op.tags.length === 0).map(([m]) => `${m} ${path}`));
    expect(missing).toEqual([]);
    const info = (doc as unknown as { info: { description: string; version: string } }).info;
    expect(info.description).not.toMatch(/spec 0/);
    expect(info.description).toMatch(/workflows/);
  });

  const operation = (method: string, url: string): Operation | undefined => doc.paths[url.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
  const answer = (op: Operation | undefined, status: string): Schema | undefined => op?.responses?.[status]?.content?.['application/json']?.schema;

  it('documents every route the server registered, with its parameters, body and answers', () => {
    expect(registered.length).toBeGreaterThanOrEqual(EXPECTED.length + 3);
    for (const route of registered.filter((r) => !r.hidden)) {
      const what = `${route.method} ${route.url}`;
      const op = operation(route.method, route.url);
      expect(op, what).toBeDefined();
      const inPath = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
      const documented = (op!.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect(documented.sort(), what).toEqual(inPath.sort());
      if (['POST', 'PUT', 'PATCH'].includes(route.method) && ['/admin/orgs/:orgId/log-drains', '/admin/orgs/:orgId/log-drains/:drainId', '/admin/orgs/:orgId/log-drains/:drainId/pause', '/internal/records'].includes(route.url)) {
        expect(op!.requestBody, what).toBeDefined();
      }
      const statuses = Object.keys(op!.responses ?? {});
      expect(statuses.some((s) => s.startsWith('2')), what).toBe(true);
    }
    // The query parameters each read validates.
    const query = (method: string, url: string) => (operation(method, url)?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name).sort();
    expect(query('GET', '/admin/orgs/:orgId/logs')).toEqual(['cursor', 'environment', 'limit', 'logSource', 'page', 'since', 'until']);
    expect(query('GET', '/admin/orgs/:orgId/log-drains/:drainId/deliveries')).toEqual(['cursor', 'kind', 'limit']);
    expect(query('GET', '/admin/orgs/:orgId/log-drains-audit')).toEqual(['action', 'cursor', 'drainId', 'limit']);
    expect(query('POST', '/admin/orgs/:orgId/log-drains/:drainId/rotate-secret')).toEqual(['finalize']);
    // The ingest route answers 202, and says so.
    expect(Object.keys(operation('POST', '/internal/records')!.responses ?? {})).toContain('202');
    expect(Object.keys(operation('POST', '/internal/records')!.responses ?? {})).not.toContain('200');
  });

  it('has strict answers for the drain read form, which names no secret but in the create answer', () => {
    const drain = '/admin/orgs/:orgId/log-drains/:drainId';
    const reads: Schema[] = [
      answer(operation('GET', drain), '200')!,
      answer(operation('PATCH', drain), '200')!,
      answer(operation('POST', `${drain}/pause`), '200')!,
      answer(operation('POST', `${drain}/resume`), '200')!,
      answer(operation('GET', '/admin/orgs/:orgId/log-drains'), '200')!.properties!.drains!.items!,
    ];
    for (const read of reads) {
      expect(read.additionalProperties).toBe(false);
      expect(read.properties).toHaveProperty('headers');
      expect(read.properties).not.toHaveProperty('secret');
      // Header values are write-only: the read form carries their last four characters.
      expect(Object.keys(read.properties!.headers!.items!.properties!).sort()).toEqual(['last4', 'name']);
    }
    const created = answer(operation('POST', '/admin/orgs/:orgId/log-drains'), '201')!;
    expect(created.additionalProperties).toBe(false);
    expect(created.properties).toHaveProperty('secret');
    // rotate-secret answers the new secret, or (finalize=true) the drain without it.
    const rotated = answer(operation('POST', `${drain}/rotate-secret`), '200') as { oneOf?: Schema[] };
    expect(rotated.oneOf?.map((s) => [s.additionalProperties, 'secret' in (s.properties ?? {})])).toEqual([[false, true], [false, false]]);
  });

  it('documents the public routes without security and the others with the bearer token', () => {
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      const op = operation('GET', url);
      expect(op?.security, url).toEqual([]);
      expect(op?.responses?.['200'], url).toBeDefined();
    }
    expect(answer(operation('GET', '/readyz'), '503')).toBeDefined();
    for (const [method, path] of EXPECTED) expect(doc.paths[path]![method]!.security, `${method} ${path}`).toBeUndefined();
    expect((doc as unknown as { security: unknown }).security).toEqual([{ bearer: [] }]);
  });
});
