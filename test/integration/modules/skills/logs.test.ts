/**
 * A skill's logs (spec 01 parts 4.3 and 5.6, contract skills.md "skill logs"):
 * the agent's log read restricted to records with `source: skill` whose
 * `attributes.skillId` is the skill in the path. The selection (other skills,
 * other sources, other agents and organizations left out), the query
 * parameters and paging of the agent's read, the scope with its deprecated
 * alternative, and projection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { record } from '../../../helpers/records.js';
import type { AgentRecord } from '../../../../src/model/record.js';

const SEED = new URL('../../../fixtures/seed-logs.json', import.meta.url).pathname;
const CRM = '/developer/agt_support/skl_crm/logs';
const AGENT = '/developer/agents/agt_support/logs';
const MIN = 60_000;

type Entry = { id: string; timestamp: string; agentId: string; source: string; environment: string; attributes: Record<string, unknown> };

let app: TestApi;
const get = (path: string, token = 'lk_read') => app.request('GET', path, { token });
const ids = (body: { logs: Entry[] }) => body.logs.map((l) => l.id);
let now = Date.now();
/** skl_crm's records on agt_support, newest first. */
let crm: AgentRecord[] = [];

beforeAll(async () => {
  app = await startApi({ SEED_FILE: SEED, LOGS_READ_RATE_LIMIT_PER_MIN: '100000' });
  now = Date.now();
  const at = (minutes: number) => new Date(now - minutes * MIN).toISOString();
  // 25 records of skl_crm, a minute apart, both environments, among records that must not match.
  crm = Array.from({ length: 25 }, (_, i) => record({
    id: `crm-${String(i).padStart(2, '0')}`, source: 'skill', timestamp: at(2 * i + 1),
    environment: i % 5 === 0 ? 'sandbox' : 'production', attributes: { skillId: 'skl_crm', step: i },
  }));
  const others = [
    // Another skill of the same agent, interleaved in time.
    ...Array.from({ length: 10 }, (_, i) => record({ id: `cal-${i}`, source: 'skill', timestamp: at(2 * i + 2), attributes: { skillId: 'skl_calendar' } })),
    // skl_crm named by a record of another source, a skill record without the attribute, the id as a number.
    record({ id: 'mcp-crm', source: 'mcp', timestamp: at(3), attributes: { skillId: 'skl_crm' } }),
    record({ id: 'skill-bare', source: 'skill', timestamp: at(4) }),
    record({ id: 'skill-prefix', source: 'skill', timestamp: at(5), attributes: { skillId: 'skl_crm_v2' } }),
    record({ id: 'skill-number', source: 'skill', timestamp: at(6), attributes: { skillId: 42 } }),
    record({ id: 'skill-other-key', source: 'skill', timestamp: at(7), attributes: { skill: 'skl_crm' } }),
    // skl_crm on other agents: a private one of the organization, another organization's.
    record({ id: 'sales-crm', agentId: 'agt_sales', agentName: 'sales-bot', source: 'skill', timestamp: at(1), attributes: { skillId: 'skl_crm' } }),
    record({ id: 'globex-crm', orgId: 'org_globex', agentId: 'agt_globex', agentName: 'globex-bot', source: 'skill', timestamp: at(1), attributes: { skillId: 'skl_crm' } }),
    // The same id as a record of agt_support's skill, but of agt_bulk.
    record({ id: 'bulk-crm', agentId: 'agt_bulk', agentName: 'bulk-bot', source: 'skill', timestamp: at(2), attributes: { skillId: 'skl_crm' } }),
    // A string that is a number in the path: matched as the string it is.
    record({ id: 'skill-42', source: 'skill', timestamp: at(8), attributes: { skillId: '42' } }),
  ];
  await app.store.logs.insert([...crm, ...others], 7);
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

describe('GET /developer/:agentId/:skillId/logs', () => {
  it("answers the skill's records of the agent only, newest first, in the agent read's entry form", async () => {
    const res = await get(`${CRM}?limit=100`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res.body)).toEqual(crm.map((r) => r.id));
    // Each entry is the agent read's entry of that record.
    const agent = await get(`${AGENT}?logSource=skill&limit=100`);
    const byId = new Map(agent.body.logs.map((l: Entry) => [l.id, l]));
    for (const entry of res.body.logs) expect(entry).toEqual(byId.get(entry.id));
    expect(res.body.logs[0]).toMatchObject({ agentId: 'agt_support', source: 'skill', eventName: 'svc.skill.call', attributes: { skillId: 'skl_crm', step: 0 } });
    expect(res.body.pagination).toEqual({
      currentPage: 1, totalPages: 1, totalCount: 25, limit: 100, hasNextPage: false, hasPrevPage: false,
      nextPage: null, prevPage: null, totalCountExact: true,
    });
    expect(res.body.nextCursor).toBeNull();
    expect(res.headers.get('deprecation')).toBeNull();
    // Another skill of the agent; an id given as a string that looks like a number; a skill with no records.
    expect(ids((await get('/developer/agt_support/skl_calendar/logs?limit=100')).body)).toEqual(Array.from({ length: 10 }, (_, i) => `cal-${i}`));
    expect(ids((await get('/developer/agt_support/42/logs')).body)).toEqual(['skill-42']);
    const none = await get('/developer/agt_support/skl_unknown/logs');
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ logs: [], nextCursor: null, pagination: { totalCount: 0, totalPages: 0, hasNextPage: false } });
  });

  it('pages as the agent read does: 20 by default, a cursor walk, and the deprecated page with its Link', async () => {
    const first = await get(CRM);
    expect(ids(first.body)).toEqual(crm.slice(0, 20).map((r) => r.id));
    expect(first.body.pagination).toMatchObject({ currentPage: 1, totalPages: 2, totalCount: 25, limit: 20, hasNextPage: true, nextPage: 2 });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`${CRM}?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res.body));
      expect(res.body.pagination.hasNextPage).toBe(res.body.nextCursor !== null);
      if (cursor) expect(res.body.pagination).toMatchObject({ currentPage: null, hasPrevPage: true, totalCount: 25 });
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(7);
    expect(seen).toEqual(crm.map((r) => r.id));

    const p2 = await get(`${CRM}?limit=10&page=2`);
    expect(ids(p2.body)).toEqual(crm.slice(10, 20).map((r) => r.id));
    expect(p2.body.pagination).toMatchObject({ currentPage: 2, prevPage: 1, nextPage: 3, totalPages: 3 });
    expect(p2.headers.get('deprecation')).toBe('true');
    expect(p2.headers.get('sunset')).toBeNull();
    const link = p2.headers.get('link')!;
    expect(link).toMatch(/^<\/developer\/agt_support\/skl_crm\/logs\?limit=10&cursor=[^>]+>; rel="next"$/);
    const next = await get(link.slice(1, link.indexOf('>')));
    expect(ids(next.body)).toEqual(crm.slice(20, 25).map((r) => r.id));
    expect((await get(`${CRM}?cursor=${p2.body.nextCursor}&page=2`)).status).toBe(400);
  });

  it('takes the selection parameters of the agent read', async () => {
    const sandbox = await get(`${CRM}?environment=sandbox&limit=100`);
    expect(ids(sandbox.body)).toEqual(crm.filter((r) => r.environment === 'sandbox').map((r) => r.id));
    const [a, b] = [crm[8]!, crm[3]!];
    const bounded = await get(`${CRM}?since=${encodeURIComponent(a.timestamp)}&until=${encodeURIComponent(b.timestamp)}&limit=100`);
    expect(ids(bounded.body)).toEqual(crm.slice(3, 9).map((r) => r.id));
    // The last 10 minutes: the records 1, 3, 5, 7 and 9 minutes old.
    expect(ids((await get(`${CRM}?since=10m`)).body)).toEqual(crm.slice(0, 5).map((r) => r.id));
    expect((await get(`${CRM}?logSource=all&limit=100`)).body.pagination.totalCount).toBe(25);
    expect((await get(`${CRM}?logSource=skill&limit=100`)).body.pagination.totalCount).toBe(25);
    // Another source: the skill's records are all `skill`, so nothing.
    expect((await get(`${CRM}?logSource=mcp`)).body.logs).toEqual([]);
    expect((await get(`${CRM}?limit=0`)).status).toBe(400);
    expect((await get(`${CRM}?since=2026-02-30`)).status).toBe(400);
    const empty = await get('/developer/agt_support//logs');
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'skillId' });
  });
});

describe('scopes and projection', () => {
  it('accepts logs:read, *:read, logs:*, a legacy key and a session, none deprecated', async () => {
    for (const token of ['lk_read', 'lk_star_read', 'lk_logs_star', 'lk_legacy', 'sess_ann']) {
      const res = await get(CRM, token);
      expect(res.status, token).toBe(200);
      expect(res.body.pagination.totalCount, token).toBe(25);
      expect(res.headers.get('deprecation'), token).toBeNull();
      expect(res.headers.get('warning'), token).toBeNull();
    }
  });

  it('accepts automations:read, deprecated: Deprecation, a Sunset date and a Warning naming it', async () => {
    const res = await get(CRM, 'lk_automations');
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(crm.slice(0, 20).map((r) => r.id));
    expect(res.headers.get('deprecation')).toBe('true');
    const sunset = res.headers.get('sunset')!;
    expect(sunset).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(new Date(sunset).toUTCString()).toBe(sunset);
    expect(res.headers.get('warning')).toBe('299 - "The automations:read scope is deprecated for this route; use logs:read"');
  });

  it("refuses other scopes, another route's deprecated scope included, with INSUFFICIENT_SCOPE", async () => {
    for (const token of ['lk_knowledge', 'lk_analytics', 'lk_manage', 'lk_ingest']) {
      const res = await get(CRM, token);
      expect(res.status, token).toBe(403);
      expect(res.body, token).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'logs:read', resourceType: 'agent', resourceId: 'agt_support' });
      expect(res.headers.get('deprecation'), token).toBeNull();
    }
    // automations:read is this route's alternative only: not the agent's nor the organization's read.
    expect((await get(AGENT, 'lk_automations')).body.code).toBe('INSUFFICIENT_SCOPE');
    expect((await get('/admin/orgs/org_acme/logs', 'lk_automations')).body.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('answers RESOURCE_NOT_PROJECTED for an agent the credential cannot see, and the skill records of one it can', async () => {
    for (const agent of ['agt_sales', 'agt_globex', 'agt_nope']) {
      const res = await get(`/developer/${agent}/skl_crm/logs`);
      expect(res.status, agent).toBe(403);
      expect(res.body, agent).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'agent', resourceId: agent, requiredScope: 'logs:read' });
    }
    expect(ids((await get('/developer/agt_sales/skl_crm/logs', 'lk_read_sales')).body)).toEqual(['sales-crm']);
    expect(ids((await get('/developer/agt_globex/skl_crm/logs', 'lk_globex_read')).body)).toEqual(['globex-crm']);
    expect(ids((await get('/developer/agt_bulk/skl_crm/logs')).body)).toEqual(['bulk-crm']);
  });

  it('answers 401 without a credential or with a revoked one', async () => {
    expect((await app.request('GET', CRM)).body).toMatchObject({ statusCode: 401, message: 'No token provided' });
    expect((await get(CRM, 'lk_revoked')).body).toMatchObject({ statusCode: 401, message: 'Invalid or expired token' });
  });
});
