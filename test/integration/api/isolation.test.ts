/**
 * Tenant isolation: organization B's credentials (a key holding every logs scope, a legacy
 * key and a member's session) can neither read, change nor receive anything of organization A:
 * drains, deliveries, audit, log reads, ingest. Each refusal is compared, status and body byte for
 * byte (the id asked for masked), with the answer for a resource that does not exist, so a caller
 * cannot tell "someone else's" from "nobody's" (spec 01 part 5.4 and 7.3). Then every batch of a run
 * with interleaved records of both organizations is checked at the destination for its tenancy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, record, records } from '../../helpers/records.js';

const SEED = new URL('../../fixtures/seed-isolation.json', import.meta.url).pathname;
const A = 'org_alpha';
const B = 'org_beta';
const KEY_A = 'lk_alpha_all';
const B_CREDENTIALS = ['lk_beta_all', 'lk_beta_legacy', 'sess_bob'];
const NO_ORG = 'org_nowhere';
/** Same shape and length as a real drain id, owned by nobody. */
const NO_DRAIN = 'drn_01JZZZZZZZZZZZZZZZZZZZZZZZ';
const alpha = { orgId: A, agentId: 'agt_alpha', agentName: 'alpha-bot' };
const beta = { orgId: B, agentId: 'agt_beta', agentName: 'beta-bot' };

type Call = [method: string, path: string, body?: unknown];

/** Every route under an organization path, for one organization and one drain id. */
function orgRoutes(org: string, drain: string, receiverUrl: string): Call[] {
  const base = `/admin/orgs/${org}/log-drains`;
  return [
    ['GET', base],
    ['POST', base, { name: 'intruder', type: 'http', endpoint: `${receiverUrl}/intruder` }],
    ['GET', `/admin/orgs/${org}/log-drains-audit?limit=100`],
    ['GET', `/admin/orgs/${org}/logs`],
    ['GET', `/admin/orgs/${org}/logs/download`],
    ...drainRoutes(org, drain, receiverUrl),
  ];
}

/** Every route naming a drain. */
function drainRoutes(org: string, drain: string, receiverUrl: string): Call[] {
  const one = `/admin/orgs/${org}/log-drains/${drain}`;
  return [
    ['GET', one],
    ['PATCH', one, { name: 'stolen', endpoint: `${receiverUrl}/stolen` }],
    ['PATCH', one, { minSeverity: 'debug' }],
    ['POST', `${one}/verify`],
    ['POST', `${one}/test`],
    ['POST', `${one}/pause`, { reason: 'hostile' }],
    ['POST', `${one}/resume`],
    ['POST', `${one}/rotate-secret`],
    ['POST', `${one}/rotate-secret?finalize=true`],
    ['GET', `${one}/deliveries?limit=100`],
    ['GET', `${one}/deliveries?kind=batch`],
    ['DELETE', one],
  ];
}

describe('tenant isolation', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  let drainA = '';
  let drainB = '';
  let before: { drain: unknown; audit: number; deliveries: number; requestsAtA: number; logsA: unknown };

  /** A's state as A sees it: what no call of B may change. */
  const snapshotOfA = async () => ({
    drain: (await app.request('GET', `/admin/orgs/${A}/log-drains/${drainA}`, { token: KEY_A })).body,
    audit: (await app.store.audit.page(A, { limit: 1000 })).length,
    deliveries: (await app.store.deliveries.page(drainA, { limit: 1000 })).length,
    requestsAtA: receiver.requests.filter((r) => r.path === '/a').length,
    logsA: (await app.request('GET', `/admin/orgs/${A}/logs?limit=100`, { token: KEY_A })).body.logs.map((l: { id: string }) => l.id),
  });

  async function verifiedDrain(org: string, token: string, path: string): Promise<string> {
    const res = await app.request('POST', `/admin/orgs/${org}/log-drains`, { token, body: { name: `drain${path.replace('/', '-')}`, type: 'http', endpoint: `${receiver.url}${path}`, minSeverity: 'debug' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await app.request('POST', `/admin/orgs/${org}/log-drains/${res.body.id}/verify`, { token });
    await waitFor(async () => (await app.request('GET', `/admin/orgs/${org}/log-drains/${res.body.id}`, { token })).body.state === 'healthy', { what: 'verified' });
    return res.body.id as string;
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      SEED_FILE: SEED, DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, HEARTBEAT_INTERVAL_MS: '0',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '100000', DRAIN_RATE_LIMIT_READ_PER_MIN: '100000', LOGS_READ_RATE_LIMIT_PER_MIN: '100000', BATCH_LINGER_MS: '50',
    });
    drainA = await verifiedDrain(A, KEY_A, '/a');
    drainB = await verifiedDrain(B, 'lk_beta_all', '/b');
    // A has history B could try to read: records delivered and kept, an audit trail, delivery rows.
    const seeded = records(3, alpha);
    await ingest(app, seeded, KEY_A);
    await waitFor(async () => (await app.store.deliveries.page(drainA, { limit: 10, kind: 'batch' })).some((d) => d.ok), { what: "A's first delivery" });
    await waitFor(async () => (await app.request('GET', `/admin/orgs/${A}/logs`, { token: KEY_A })).body.logs.length === 3, { what: "A's platform copy" });
    before = await snapshotOfA();
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const call = async (token: string, [method, path, body]: Call) => {
    const res = await app.request(method, path, { token, ...(body === undefined ? {} : { body }) });
    const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? null);
    return { status: res.status, text, contentType: res.headers.get('content-type') };
  };
  /** An answer with the asked-for ids masked, for comparing a refusal with the one for nothing. */
  const masked = (a: { status: number; text: string; contentType: string | null }, ...ids: string[]) =>
    ({ ...a, text: ids.reduce((t, id) => t.replaceAll(id, '<id>'), a.text) });

  it.each(B_CREDENTIALS)("answers %s on A's organization path exactly as on an organization that does not exist", async (token) => {
    const mine = orgRoutes(A, drainA, receiver.url);
    const nobodys = orgRoutes(NO_ORG, drainA, receiver.url);
    for (const [i, route] of mine.entries()) {
      const onA = await call(token, route);
      const onNothing = await call(token, nobodys[i]!);
      expect(onA.status, `${route[0]} ${route[1]}`).toBe(403);
      expect(JSON.parse(onA.text), `${route[0]} ${route[1]}`).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceId: A });
      expect(masked(onA, A), `${route[0]} ${route[1]}`).toEqual(masked(onNothing, NO_ORG));
    }
  });

  it.each(B_CREDENTIALS)("answers %s on A's drain under B's own path exactly as on a drain that does not exist", async (token) => {
    const aDrain = drainRoutes(B, drainA, receiver.url);
    const noDrain = drainRoutes(B, NO_DRAIN, receiver.url);
    for (const [i, route] of aDrain.entries()) {
      const onA = await call(token, route);
      const onNothing = await call(token, noDrain[i]!);
      expect([onA.status, JSON.parse(onA.text).code], `${route[0]} ${route[1]}`).toEqual([404, 'DRAIN_NOT_FOUND']);
      // Byte for byte: the body names no id, so nothing needs masking.
      expect(onA, `${route[0]} ${route[1]}`).toEqual(onNothing);
    }
    // The audit route filtered by A's drain finds nothing, like a filter on no drain at all.
    const audit = await call(token, ['GET', `/admin/orgs/${B}/log-drains-audit?drainId=${drainA}`]);
    expect(audit.status).toBe(200);
    expect(JSON.parse(audit.text).entries).toEqual([]);
    expect(audit).toEqual(await call(token, ['GET', `/admin/orgs/${B}/log-drains-audit?drainId=${NO_DRAIN}`]));
  });

  it("answers B's key on A's agents' log route exactly as on an agent that does not exist", async () => {
    for (const token of B_CREDENTIALS) {
      for (const agent of ['agt_alpha', 'agt_alpha_private']) {
        const onA = await call(token, ['GET', `/developer/agents/${agent}/logs`]);
        const onNothing = await call(token, ['GET', '/developer/agents/agt_nowhere/logs']);
        expect([onA.status, JSON.parse(onA.text).code], `${token} ${agent}`).toEqual([403, 'RESOURCE_NOT_PROJECTED']);
        expect(masked(onA, agent), `${token} ${agent}`).toEqual(masked(onNothing, 'agt_nowhere'));
      }
    }
    // B's own organization read lists nothing of A.
    const own = await app.request('GET', `/admin/orgs/${B}/logs?limit=100`, { token: 'lk_beta_all' });
    expect(own.status).toBe(200);
    expect(own.body.logs.filter((l: { orgId: string }) => l.orgId !== B)).toEqual([]);
  });

  it("refuses records of A ingested with B's key, record by record, and keeps B's own", async () => {
    const stolen = records(2, alpha);
    const own = record(beta);
    const res = await app.request('POST', '/internal/records', { token: 'lk_beta_all', body: [stolen[0], own, stolen[1]] });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      accepted: 1,
      rejected: [
        { index: 0, errors: ["orgId is not the credential's organization"] },
        { index: 2, errors: ["orgId is not the credential's organization"] },
      ],
    });
    // B's own record reaches B's drain, so the refused ones had every chance to travel too.
    await waitFor(() => receiver.batches().some((r) => r.path === '/b' && parseBatch(r).records.some((x) => x.id === own.id)), { what: "B's record" });
    const everywhere = JSON.stringify(receiver.requests.map((r) => r.body.toString('utf8')));
    for (const r of stolen) expect(everywhere).not.toContain(r.id);
    const logsA = (await app.request('GET', `/admin/orgs/${A}/logs?limit=100`, { token: KEY_A })).body.logs.map((l: { id: string }) => l.id);
    for (const r of stolen) expect(logsA).not.toContain(r.id);
  });

  it('left everything of A as it was: drain, audit, deliveries, destination, platform copy', async () => {
    expect(await snapshotOfA()).toEqual(before);
    // And the refused calls did not slip into B's audit either (B's own log holds only its own drain's moves).
    const auditB = await app.store.audit.page(B, { limit: 1000 });
    expect(auditB.every((e) => JSON.stringify(e).includes(drainB) && !JSON.stringify(e).includes(drainA))).toBe(true);
  });

  it('keeps every batch to one organization, asserted at the destination, with records of both interleaved', async () => {
    const sentA: string[] = [];
    const sentB: string[] = [];
    for (let round = 0; round < 8; round++) {
      const a = records(6, alpha);
      const b = records(6, beta);
      sentA.push(...a.map((r) => r.id));
      sentB.push(...b.map((r) => r.id));
      await Promise.all([ingest(app, a, KEY_A), ingest(app, b, 'lk_beta_all')]);
    }
    const idsAt = (path: string) => new Set(receiver.accepted().filter((r) => r.path === path).flatMap((r) => parseBatch(r).records.map((x) => x.id)));
    await waitFor(() => sentA.every((id) => idsAt('/a').has(id)) && sentB.every((id) => idsAt('/b').has(id)), { what: 'every record delivered' });
    const sentBy: Record<string, Set<string>> = { '/a': new Set(sentA), '/b': new Set(sentB) };
    const orgOf: Record<string, string> = { '/a': A, '/b': B };
    let checked = 0;
    for (const r of receiver.batches().filter((x) => x.path === '/a' || x.path === '/b')) {
      const batch = parseBatch(r);
      const org = orgOf[r.path]!;
      expect(batch.resource['service.namespace'], r.path).toBe(org);
      expect(batch.resource['svc.org.id'], r.path).toBe(org);
      const other = r.path === '/a' ? sentBy['/b']! : sentBy['/a']!;
      expect(batch.records.filter((x) => other.has(x.id)), r.path).toEqual([]);
      checked++;
    }
    // Both drains received several batches while the two organizations' records were interleaved.
    expect(checked).toBeGreaterThanOrEqual(4);
  });
});
