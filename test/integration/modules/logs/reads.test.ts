/**
 * The log read routes (spec 01 parts 2.5, 4.3, 5.4-5.6) on PGlite and on
 * Postgres: every parameter, header and edge, more than 10,000 matching
 * rows, scopes, projection and the NDJSON export.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { record } from '../../../helpers/records.js';
import type { AgentRecord } from '../../../../src/model/record.js';

const SEED = new URL('../../../fixtures/seed-logs.json', import.meta.url).pathname;
const AGENT = '/developer/agents/agt_support/logs';
const ORG = '/admin/orgs/org_acme/logs';
const DOWNLOAD = '/admin/orgs/org_acme/logs/download';
const BULK = 10_050;
const MIN = 60_000;

type Entry = { id: string; timestamp: string; agentId: string; source: string; environment: string; orgId: string };

/** Fixture rows of agt_support: 60 records a minute apart, sources and environments mixed. */
function supportRecords(now: number): AgentRecord[] {
  return Array.from({ length: 60 }, (_, i) =>
    record({
      id: `sup-${String(i).padStart(3, '0')}`,
      agentId: 'agt_support',
      agentName: 'support-bot',
      timestamp: new Date(now - (i + 1) * MIN).toISOString(),
      source: i % 3 === 0 ? 'skill' : 'mcp',
      environment: i % 4 === 0 ? 'sandbox' : 'production',
    }),
  );
}

const STORES: { name: string; env: () => Promise<{ env: Record<string, string>; drop?: () => Promise<void> }> }[] = [
  { name: 'pglite', env: async () => ({ env: {} }) },
  {
    name: 'postgres',
    env: async () => {
      const db: TestDatabase = await createTestDatabase();
      return { env: { DATABASE_URL: db.url }, drop: () => db.drop() };
    },
  },
];

describe.each(STORES)('log read routes on $name', (kind) => {
  let app: TestApp;
  let drop: (() => Promise<void>) | undefined;
  // Set in beforeAll, after the bulk insert, so relative bounds (15m) see fresh ages.
  let now = Date.now();
  let support: AgentRecord[] = [];
  const bulkBase = Date.now() - 2 * 3_600_000;

  const get = (path: string, token = 'lk_read') => app.request('GET', path, { token });

  beforeAll(async () => {
    const { env, drop: d } = await kind.env();
    drop = d;
    app = await startApp({ ...env, SEED_FILE: SEED, LOGS_READ_RATE_LIMIT_PER_MIN: '100000' }, 'serve');
    // More than 10,000 rows of one agent, 10 ms apart, older than every other row.
    const bulk = Array.from({ length: BULK }, (_, i) =>
      record({ id: `blk-${String(i).padStart(5, '0')}`, agentId: 'agt_bulk', agentName: 'bulk-bot', timestamp: new Date(bulkBase - i * 10).toISOString() }),
    );
    for (let i = 0; i < bulk.length; i += 2000) await app.store.logs.insert(bulk.slice(i, i + 2000), 7);
    now = Date.now();
    support = supportRecords(now);
    await app.store.logs.insert(support, 7);
    await app.store.logs.insert([
      record({ id: 'sales-1', agentId: 'agt_sales', agentName: 'sales-bot', timestamp: new Date(now - 30 * 1000).toISOString() }),
      record({ id: 'globex-1', orgId: 'org_globex', agentId: 'agt_globex', agentName: 'globex-bot', timestamp: new Date(now - 20 * 1000).toISOString() }),
    ], 7);
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await drop?.();
  });

  describe('GET /developer/agents/:agentId/logs', () => {
    it('answers the newest 20 entries first, with every documented field', async () => {
      const res = await get(AGENT);
      expect(res.status).toBe(200);
      expect(res.body.logs.map((l: Entry) => l.id)).toEqual(support.slice(0, 20).map((r) => r.id));
      const r = support[0]!;
      expect(res.body.logs[0]).toEqual({
        id: r.id, timestamp: r.timestamp, orgId: 'org_acme', agentId: 'agt_support', agentName: 'support-bot', agentVersion: null,
        environment: r.environment, source: r.source, eventName: `svc.${r.source}.call`, severity: 'info', severityNumber: 9,
        message: r.message, executionId: r.executionId, traceId: null, spanId: null, attributes: {},
      });
      expect(res.body.pagination).toEqual({
        currentPage: 1, totalPages: 3, totalCount: 60, limit: 20, hasNextPage: true, hasPrevPage: false,
        nextPage: 2, prevPage: null, totalCountExact: true,
      });
      expect(typeof res.body.nextCursor).toBe('string');
      // The implicit first page is not deprecated.
      expect(res.headers.get('deprecation')).toBeNull();
      expect(res.headers.get('link')).toBeNull();
    });

    it('walks every entry once through nextCursor, ending with null', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await get(`${AGENT}?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.logs.map((l: Entry) => l.id));
        if (cursor) expect(res.body.pagination).toMatchObject({ currentPage: null, nextPage: null, prevPage: null, hasPrevPage: true, totalCount: 60 });
        expect(res.body.pagination.hasNextPage).toBe(res.body.nextCursor !== null);
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(9);
      expect(seen).toEqual(support.map((r) => r.id));
    });

    it('filters by logSource (or all) and environment', async () => {
      const skill = await get(`${AGENT}?logSource=skill&limit=100`);
      expect(skill.body.logs.map((l: Entry) => l.id)).toEqual(support.filter((r) => r.source === 'skill').map((r) => r.id));
      const all = await get(`${AGENT}?logSource=all&limit=100`);
      expect(all.body.pagination.totalCount).toBe(60);
      const unknown = await get(`${AGENT}?logSource=voice_call`);
      expect(unknown.status).toBe(200);
      expect(unknown.body.logs).toEqual([]);
      expect(unknown.body.pagination).toMatchObject({ totalCount: 0, totalPages: 0, hasNextPage: false, nextPage: null });
      const sandbox = await get(`${AGENT}?environment=sandbox&limit=100`);
      expect(sandbox.body.logs.map((l: Entry) => l.id)).toEqual(support.filter((r) => r.environment === 'sandbox').map((r) => r.id));
      const both = await get(`${AGENT}?environment=production&logSource=mcp&limit=100`);
      expect(both.body.logs.map((l: Entry) => l.id)).toEqual(support.filter((r) => r.environment === 'production' && r.source === 'mcp').map((r) => r.id));
    });

    it('takes since and until as inclusive bounds, ISO 8601 or relative', async () => {
      const [a, b] = [support[10]!, support[5]!];
      const exact = await get(`${AGENT}?since=${encodeURIComponent(a.timestamp)}&until=${encodeURIComponent(b.timestamp)}&limit=100`);
      expect(exact.body.logs.map((l: Entry) => l.id)).toEqual(support.slice(5, 11).map((r) => r.id));
      // The same instant in another zone notation.
      const offset = new Date(Date.parse(a.timestamp) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
      const zoned = await get(`${AGENT}?since=${encodeURIComponent(offset)}&until=${encodeURIComponent(a.timestamp)}`);
      expect(zoned.body.logs.map((l: Entry) => l.id)).toEqual([a.id]);
      // Relative: the last 15m hold the 14 records 1..14 minutes old (15 minutes old is borderline, so 14m30s).
      const rel = await get(`${AGENT}?since=870s&limit=100`);
      expect(rel.body.logs.map((l: Entry) => l.id)).toEqual(support.slice(0, 14).map((r) => r.id));
      const relM = await get(`${AGENT}?since=15m&until=10m&limit=100`);
      expect(relM.body.logs.map((l: Entry) => l.id)).toEqual(support.slice(9, 14).map((r) => r.id));
      expect((await get(`${AGENT}?since=2h`)).body.pagination.totalCount).toBe(60);
      expect((await get(`${AGENT}?since=7d`)).body.pagination.totalCount).toBe(60);
      expect((await get(`${AGENT}?until=2h`)).body.pagination.totalCount).toBe(0);
      // A date alone: since from its first instant, until to its last.
      const today = new Date(now).toISOString().slice(0, 10);
      const dated = await get(`${AGENT}?since=${today}&until=${today}&limit=100`);
      expect(dated.body.logs.map((l: Entry) => l.id)).toEqual(support.filter((r) => r.timestamp.startsWith(today)).map((r) => r.id));
    });

    it('clamps limit to 100 and refuses what is not a count', async () => {
      const big = await get(`${AGENT}?limit=500`);
      expect(big.status).toBe(200);
      expect(big.body.logs).toHaveLength(60);
      expect(big.body.pagination).toMatchObject({ limit: 100, totalPages: 1, hasNextPage: false });
      expect(big.body.nextCursor).toBeNull();
      expect((await get(`${AGENT}?limit=5`)).body.logs).toHaveLength(5);
      expect((await get(`${AGENT}?limit=99999999999`)).body.pagination.limit).toBe(100);
      for (const bad of ['0', '-1', 'abc', '1.5', '', '1e3']) {
        const res = await get(`${AGENT}?limit=${bad}`);
        expect(res.status, `limit=${bad}`).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', field: 'limit' });
        expect(Array.isArray(res.body.message)).toBe(true);
      }
    });

    it.each([
      ['logSource', 'logSource=MCP'],
      ['logSource', 'logSource=a%20b'],
      ['logSource', `logSource=${'a'.repeat(65)}`],
      ['environment', 'environment=staging'],
      ['since', 'since=yesterday'],
      ['since', 'since=15x'],
      ['since', 'since=2026-13-01'],
      ['since', 'since=2026-02-30'],
      ['since', 'since=2026-11-20T10:00:00'],
      ['since', 'since=2026-02-30T00:00:00Z'],
      ['until', 'until=2026-11-20T24:00:00Z'],
      ['until', 'until=2026-11-20T10:61:00%2B01:00'],
      ['until', 'until=-5m'],
      ['since', `since=${new Date(now).toISOString()}&until=${new Date(now - MIN).toISOString()}`],
      ['cursor', 'cursor=not-a-cursor!'],
      ['cursor', `cursor=${Buffer.from('["x"]').toString('base64url')}`],
      ['cursor', `cursor=${Buffer.from('["not a time","id"]').toString('base64url')}`],
      ['cursor', 'cursor=abc&page=2'],
      ['page', 'page=0'],
      ['page', 'page=two'],
      ['page', 'page=1002&limit=100'],
      ['logSource', 'logSource=mcp&logSource=skill'],
    ])('refuses %s: %s', async (field, query) => {
      const res = await get(`${AGENT}?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', field });
    });

    it('serves the deprecated page: Deprecation, and a Link to the cursor form of the next page', async () => {
      const p2 = await get(`${AGENT}?page=2&limit=10&logSource=mcp`);
      expect(p2.status).toBe(200);
      const mcp = support.filter((r) => r.source === 'mcp');
      expect(p2.body.logs.map((l: Entry) => l.id)).toEqual(mcp.slice(10, 20).map((r) => r.id));
      expect(p2.body.pagination).toEqual({
        currentPage: 2, totalPages: 4, totalCount: 40, limit: 10, hasNextPage: true, hasPrevPage: true,
        nextPage: 3, prevPage: 1, totalCountExact: true,
      });
      expect(p2.headers.get('deprecation')).toBe('true');
      expect(p2.headers.get('sunset')).toBeNull(); // a deprecated parameter, not a deprecated scope
      const link = p2.headers.get('link')!;
      const m = /^<([^>]+)>; rel="next"$/.exec(link);
      expect(m, link).not.toBeNull();
      const next = new URL(m![1]!, app.base);
      expect(next.pathname).toBe(AGENT);
      expect(next.searchParams.get('page')).toBeNull();
      expect(next.searchParams.get('cursor')).toBe(p2.body.nextCursor);
      expect(next.searchParams.get('limit')).toBe('10');
      expect(next.searchParams.get('logSource')).toBe('mcp');
      // Following the link gives page 3, without deprecation.
      const p3 = await get(next.pathname + next.search);
      expect(p3.body.logs.map((l: Entry) => l.id)).toEqual(mcp.slice(20, 30).map((r) => r.id));
      expect(p3.headers.get('deprecation')).toBeNull();
      // An explicit page=1 is deprecated too; the last page has no next link.
      expect((await get(`${AGENT}?page=1`)).headers.get('deprecation')).toBe('true');
      const p4 = await get(`${AGENT}?page=4&limit=10&logSource=mcp`);
      expect(p4.body.pagination).toMatchObject({ currentPage: 4, hasNextPage: false, nextPage: null, prevPage: 3 });
      expect(p4.headers.get('deprecation')).toBe('true');
      expect(p4.headers.get('link')).toBeNull();
      // Past the end: empty, still consistent.
      const p9 = await get(`${AGENT}?page=9&limit=10`);
      expect(p9.body).toMatchObject({ logs: [], nextCursor: null });
      expect(p9.body.pagination).toMatchObject({ currentPage: 9, totalPages: 6, hasNextPage: false, hasPrevPage: true, prevPage: 8 });
    });

    it('caps totalCount at 10,000 above that many matches, while hasNextPage stays right', async () => {
      const path = '/developer/agents/agt_bulk/logs';
      const first = await get(`${path}?limit=100`);
      expect(first.body.pagination).toEqual({
        currentPage: 1, totalPages: 100, totalCount: 10000, limit: 100, hasNextPage: true, hasPrevPage: false,
        nextPage: 2, prevPage: null, totalCountExact: false,
      });
      // Page 101 holds entries 10,001 to 10,050: past the capped count, still there, and the last.
      const last = await get(`${path}?limit=100&page=101`);
      expect(last.body.logs).toHaveLength(BULK - 10_000);
      expect(last.body.logs[0].id).toBe('blk-10000');
      expect(last.body.pagination).toMatchObject({ currentPage: 101, totalCount: 10000, totalCountExact: false, hasNextPage: false, nextPage: null });
      // Page 100 has a next page although the count says 100 pages.
      expect((await get(`${path}?limit=100&page=100`)).body.pagination).toMatchObject({ hasNextPage: true, nextPage: 101, totalPages: 100 });
      // Exactly 10,000 matches is an exact count.
      const until = new Date(bulkBase - 50 * 10).toISOString();
      const exact = await get(`${path}?until=${encodeURIComponent(until)}`);
      expect(exact.body.pagination).toMatchObject({ totalCount: 10000, totalCountExact: true, totalPages: 500 });
      // And 10,001 is not.
      const over = await get(`${path}?until=${encodeURIComponent(new Date(Date.parse(until) + 10).toISOString())}`);
      expect(over.body.pagination).toMatchObject({ totalCount: 10000, totalCountExact: false });
    });

    it('walks past 10,000 entries by cursor, ending exactly at the last', async () => {
      let cursor: string | null = null;
      let count = 0;
      let lastId = '';
      do {
        const res = await get(`/developer/agents/agt_bulk/logs?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        count += res.body.logs.length;
        lastId = res.body.logs.at(-1)?.id ?? lastId;
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(count).toBe(BULK);
      expect(lastId).toBe(`blk-${BULK - 1}`);
    });
  });

  describe('GET /admin/orgs/:orgId/logs', () => {
    it('lists every visible agent of the organization, newest first, never another organization', async () => {
      const res = await get(`${ORG}?limit=100`);
      expect(res.status).toBe(200);
      const ids = res.body.logs.map((l: Entry) => l.id);
      // The private agent's record is not visible to a key without a grant; the other org's never.
      expect(ids).toEqual(support.map((r) => r.id).concat(Array.from({ length: 40 }, (_, i) => `blk-${String(i).padStart(5, '0')}`)));
      expect(res.body.pagination).toMatchObject({ totalCount: 10000, totalCountExact: false, hasNextPage: true });
      expect(res.body.logs.every((l: Entry) => l.orgId === 'org_acme')).toBe(true);
      // With a grant for the private agent, or as the user (legacy key, session), it appears.
      for (const token of ['lk_read_sales', 'lk_legacy', 'sess_ann', 'sess_max']) {
        const withSales = await get(`${ORG}?limit=3`, token);
        expect(withSales.status, token).toBe(200);
        expect(withSales.body.logs.map((l: Entry) => l.id), token).toEqual(['sales-1', support[0]!.id, support[1]!.id]);
      }
      // The other organization's key reads its own organization only.
      const globex = await get('/admin/orgs/org_globex/logs', 'lk_globex_read');
      expect(globex.body.logs.map((l: Entry) => l.id)).toEqual(['globex-1']);
    });

    it('takes the same parameters as the agent route', async () => {
      const res = await get(`${ORG}?logSource=skill&environment=sandbox&since=2h&limit=2`);
      const want = support.filter((r) => r.source === 'skill' && r.environment === 'sandbox');
      expect(want.length).toBe(5);
      expect(res.body.logs.map((l: Entry) => l.id)).toEqual(want.slice(0, 2).map((r) => r.id));
      expect(res.body.pagination).toMatchObject({ totalCount: 5, totalPages: 3 });
      const next = await get(`${ORG}?logSource=skill&environment=sandbox&since=2h&limit=2&cursor=${res.body.nextCursor}`);
      expect(next.body.logs.map((l: Entry) => l.id)).toEqual(want.slice(2, 4).map((r) => r.id));
      const paged = await get(`${ORG}?page=2&limit=2&logSource=skill&environment=sandbox&since=2h`);
      expect(paged.body.logs.map((l: Entry) => l.id)).toEqual(want.slice(2, 4).map((r) => r.id));
      expect(paged.headers.get('deprecation')).toBe('true');
      expect(paged.headers.get('link')).toContain('rel="next"');
      expect((await get(`${ORG}?environment=prod`)).status).toBe(400);
      expect((await get(`${ORG}?cursor=x&page=1`)).status).toBe(400);
    });
  });

  describe('GET /admin/orgs/:orgId/logs/download', () => {
    it('streams the whole selection as NDJSON, newest first, one entry a line', async () => {
      const res = await fetch(`${app.base}${DOWNLOAD}`, { headers: { authorization: 'Bearer lk_read' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="logs-org_acme-\d{8}T\d{6}Z\.ndjson"$/);
      const text = await res.text();
      expect(text.endsWith('\n')).toBe(true);
      const lines = text.slice(0, -1).split('\n').map((l) => JSON.parse(l) as Entry);
      expect(lines).toHaveLength(support.length + BULK);
      expect(new Set(lines.map((l) => l.id)).size).toBe(lines.length);
      expect(lines.slice(0, 60).map((l) => l.id)).toEqual(support.map((r) => r.id));
      expect(lines.at(-1)!.id).toBe(`blk-${BULK - 1}`);
      const times = lines.map((l) => Date.parse(l.timestamp));
      expect(times.every((t, i) => i === 0 || t <= times[i - 1]!)).toBe(true);
      // Each line is the list route's entry.
      const listed = await get(`${ORG}?limit=1`);
      expect(lines[0]).toEqual(listed.body.logs[0]);
    });

    it('applies the selection, and resumes after a cursor', async () => {
      const res = await fetch(`${app.base}${DOWNLOAD}?logSource=skill&environment=production&since=2h`, { headers: { authorization: 'Bearer lk_read' } });
      const ids = (await res.text()).trim().split('\n').map((l) => (JSON.parse(l) as Entry).id);
      const want = support.filter((r) => r.source === 'skill' && r.environment === 'production').map((r) => r.id);
      expect(ids).toEqual(want);
      const page = await get(`${ORG}?logSource=skill&environment=production&since=2h&limit=4`);
      const rest = await fetch(`${app.base}${DOWNLOAD}?logSource=skill&environment=production&since=2h&cursor=${page.body.nextCursor}`, { headers: { authorization: 'Bearer lk_read' } });
      expect((await rest.text()).trim().split('\n').map((l) => (JSON.parse(l) as Entry).id)).toEqual(want.slice(4));
      const empty = await fetch(`${app.base}${DOWNLOAD}?until=7d`, { headers: { authorization: 'Bearer lk_read' } });
      expect(empty.status).toBe(200);
      expect(await empty.text()).toBe('');
      const bad = await get(`${DOWNLOAD}?since=soon`);
      expect(bad.status).toBe(400);
      expect(bad.body.field).toBe('since');
    });
    it('ends a failed export as a failed transfer, never as a silently short file', async () => {
      const original = app.store.logs.page;
      let calls = 0;
      app.store.logs.page = async (...args: Parameters<typeof original>) => {
        if (++calls === 3) throw new Error('store went away');
        return original(...args);
      };
      try {
        const res = await fetch(`${app.base}${DOWNLOAD}`, { headers: { authorization: 'Bearer lk_read' } });
        expect(res.status).toBe(200);
        await expect(res.text()).rejects.toThrow();
      } finally {
        app.store.logs.page = original;
      }
      // The API carries on.
      expect((await get(`${ORG}?limit=1`)).status).toBe(200);
    });
  });

  describe('scopes and projection', () => {
    it('accepts logs:read, *:read and logs:*, and refuses other scopes with INSUFFICIENT_SCOPE', async () => {
      for (const token of ['lk_read', 'lk_star_read', 'lk_logs_star', 'lk_legacy', 'sess_ann']) {
        for (const path of [AGENT, ORG, DOWNLOAD]) {
          const res = await get(path, token);
          expect(res.status, `${token} ${path}`).toBe(200);
          expect(res.headers.get('deprecation'), `${token} ${path}`).toBeNull();
        }
      }
      for (const [token, path] of [['lk_manage', AGENT], ['lk_manage', ORG], ['lk_ingest', DOWNLOAD], ['lk_analytics', AGENT], ['lk_knowledge', ORG], ['lk_knowledge', DOWNLOAD]] as const) {
        const res = await get(path, token);
        expect(res.status, `${token} ${path}`).toBe(403);
        expect(res.body, `${token} ${path}`).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'logs:read' });
      }
    });

    it('accepts the deprecated scopes with Deprecation, a Sunset date in 2027 and a Warning naming the scope', async () => {
      for (const [token, path, scope] of [['lk_knowledge', AGENT, 'knowledge:read'], ['lk_analytics', ORG, 'analytics:read'], ['lk_analytics', DOWNLOAD, 'analytics:read']] as const) {
        const res = await get(path, token);
        expect(res.status, path).toBe(200);
        expect(res.headers.get('deprecation')).toBe('true');
        const sunset = res.headers.get('sunset')!;
        expect(sunset).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} 2027 \d{2}:\d{2}:\d{2} GMT$/);
        expect(new Date(sunset).toUTCString()).toBe(sunset);
        const warning = res.headers.get('warning')!;
        expect(warning).toContain(scope);
        expect(warning).toMatch(/^299 - "/);
      }
    });

    it('answers the same RESOURCE_NOT_PROJECTED for a private agent without grant, another organization\'s agent and a nonexistent one', async () => {
      const bodies = [];
      for (const agent of ['agt_sales', 'agt_globex', 'agt_nope', 'bad%20id']) {
        const res = await get(`/developer/agents/${agent}/logs`);
        expect(res.status, agent).toBe(403);
        expect(res.body.code, agent).toBe('RESOURCE_NOT_PROJECTED');
        expect(res.body.resourceType).toBe('agent');
        bodies.push({ ...res.body, resourceId: '-', message: res.body.message.replace(res.body.resourceId, '-') });
      }
      for (const b of bodies) expect(b).toEqual(bodies[0]);
      // Even with a scope that would not suffice, an invisible agent is not projected (no scope hint leaks).
      expect((await get('/developer/agents/agt_globex/logs', 'lk_manage')).body.code).toBe('RESOURCE_NOT_PROJECTED');
      // The private agent with a grant, and the other organization's agent with its own key.
      expect((await get('/developer/agents/agt_sales/logs', 'lk_read_sales')).body.logs.map((l: Entry) => l.id)).toEqual(['sales-1']);
      expect((await get('/developer/agents/agt_globex/logs', 'lk_globex_read')).body.logs.map((l: Entry) => l.id)).toEqual(['globex-1']);
      // Organization routes: another organization or a nonexistent one, the same answer.
      const org = [];
      for (const path of ['/admin/orgs/org_globex/logs', '/admin/orgs/org_nope/logs', '/admin/orgs/org_globex/logs/download']) {
        const res = await get(path);
        expect(res.status, path).toBe(403);
        org.push({ code: res.body.code, resourceType: res.body.resourceType, requiredScope: res.body.requiredScope });
      }
      for (const b of org) expect(b).toEqual({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'organization', requiredScope: 'logs:read' });
    });

    it('answers 401 without a credential or with a revoked one', async () => {
      expect((await app.request('GET', AGENT)).body).toMatchObject({ statusCode: 401, message: 'No token provided' });
      expect((await get(AGENT, 'lk_revoked')).body).toMatchObject({ statusCode: 401, message: 'Invalid or expired token' });
      expect((await get(DOWNLOAD, 'lk_nope')).status).toBe(401);
    });
  });
});

describe('log read routes: rate limit and sunset', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: SEED, DEPRECATED_SCOPES_SUNSET: '2020-01-01' }, 'serve');
  });
  afterAll(async () => app?.stop());

  it('allows 120 requests a minute per credential, then 429 RATE_LIMITED with Retry-After', async () => {
    // Near the end of a minute the window could roll over mid-loop; start in a fresh one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    const paths = [AGENT, ORG, DOWNLOAD];
    for (let i = 0; i < 120; i++) {
      const res = await app.request('GET', paths[i % 3]!, { token: 'lk_read' });
      expect(res.status, `request ${i + 1}`).toBe(200);
    }
    const over = await app.request('GET', AGENT, { token: 'lk_read' });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.body.retryAfterSeconds).toBe(retryAfter);
    // The budget is the credential's: another key of the same user and organization is unaffected.
    expect((await app.request('GET', AGENT, { token: 'lk_star_read' })).status).toBe(200);
  });

  it('refuses the deprecated scopes after the sunset', async () => {
    for (const [token, path] of [['lk_knowledge', AGENT], ['lk_analytics', ORG], ['lk_analytics', DOWNLOAD], ['lk_automations', '/developer/agt_support/skl_crm/logs']] as const) {
      const res = await app.request('GET', path, { token });
      expect(res.status, path).toBe(403);
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'logs:read' });
      expect(res.headers.get('deprecation')).toBeNull();
    }
  });
});

describe('log read routes: records flow from ingestion through the worker into the reads', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: SEED }, 'start');
  });
  afterAll(async () => app?.stop());

  it('stores every valid record the worker consumes, and the reads find them', async () => {
    const recs = Array.from({ length: 30 }, (_, i) => record({ id: `flow-${i}`, timestamp: new Date(Date.now() - i * 1000).toISOString(), attributes: { i } }));
    const res = await app.request('POST', '/internal/records', { token: 'lk_ingest', body: [...recs, { id: 'broken' }] });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(30);
    const deadline = Date.now() + 15_000;
    let logs: Entry[] = [];
    while (Date.now() < deadline) {
      logs = (await app.request('GET', `${AGENT}?limit=100`, { token: 'lk_read' })).body.logs;
      if (logs.length >= 30) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(logs.map((l) => l.id)).toEqual(recs.map((r) => r.id));
    expect((logs[5] as unknown as { attributes: unknown }).attributes).toEqual({ i: 5 });
  });
});
