/**
 * The whole path, embedded and on Kafka + Postgres (vitest.config.ts runs it in both): records posted to the ingest route
 * arrive at a self-signed HTTPS receiver in signed, gzipped, schema-valid
 * batches of one resource each, for the drains of their own organization only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, validateBatch, verifySignature, type HttpsReceiver } from '../../helpers/receiver.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

const ORG = '/admin/orgs/org_acme/log-drains';

describe('embedded pipeline: ingest route -> queue -> worker -> HTTPS receiver', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  let secret: string;
  let ndjsonDrainId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({ DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BATCH_MAX_RECORDS: '50' });
    const json = await app.request('POST', ORG, { token: 'lk_acme_manage', body: { name: 'json', type: 'http', endpoint: `${receiver.url}/json`, minSeverity: 'debug' } });
    secret = json.body.secret;
    const nd = await app.request('POST', ORG, {
      token: 'lk_acme_manage',
      body: { name: 'ndjson', type: 'http', endpoint: `${receiver.url}/ndjson`, format: 'ndjson', secret: 'a-plain-secret-of-some-length', minSeverity: 'debug' },
    });
    ndjsonDrainId = nd.body.id;
    const globex = await app.request('POST', '/admin/orgs/org_globex/log-drains', { token: 'lk_globex_manage', body: { name: 'g', type: 'http', endpoint: `${receiver.url}/globex`, minSeverity: 'debug' } });
    for (const [org, id, token] of [['org_acme', json.body.id, 'lk_acme_manage'], ['org_acme', nd.body.id, 'lk_acme_manage'], ['org_globex', globex.body.id, 'lk_globex_manage']]) {
      await app.request('POST', `/admin/orgs/${org}/log-drains/${id}/verify`, { token });
      await waitFor(async () => (await app.request('GET', `/admin/orgs/${org}/log-drains/${id}`, { token })).body.state === 'healthy', { what: `${id} healthy` });
    }
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  it('delivers every record to each drain of its organization, signed, gzipped and schema-valid', async () => {
    const acme = [...syntheticRecords(240, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot', version: '4' }, { id: 'agt_sales', name: 'sales-bot' }] }], idPrefix: 'acme', seed: 7 })];
    const globex = [...syntheticRecords(60, { orgs: [{ orgId: 'org_globex', agents: [{ id: 'agt_globex', name: 'globex-bot' }] }], idPrefix: 'globex', seed: 8 })];
    const post = (token: string, records: unknown[]) =>
      app.request('POST', '/internal/records', { token, body: records.map((r) => JSON.stringify(r)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
    const a = await post('lk_acme_ingest', acme);
    expect(a.status).toBe(202);
    expect(a.body).toEqual({ accepted: 240, rejected: [] });
    expect((await post('lk_globex_manage', globex)).body.accepted).toBe(60);

    const idsAt = (path: string) =>
      new Set(receiver.batches().filter((r) => r.path === path).flatMap((r) => parseBatch(r).records.map((x) => x.id)));
    await waitFor(() => idsAt('/json').size === 240 && idsAt('/ndjson').size === 240 && idsAt('/globex').size === 60, { what: 'all records at the receiver', timeoutMs: 20_000 });

    for (const req of receiver.batches()) {
      expect(req.headers['content-encoding']).toBe('gzip');
      const batch = parseBatch(req);
      expect(validateBatch(batch), JSON.stringify(validateBatch.errors)).toBe(true);
      expect(req.headers['x-svc-batch-id']).toBe(batch.batchId);
      expect(req.headers['x-svc-schema']).toBe(batch.schemaUrl);
      expect(req.headers['webhook-id']).toBe(batch.batchId);
      // One resource per batch, and only the drain's own organization.
      const org = req.path === '/globex' ? 'org_globex' : 'org_acme';
      expect(batch.resource['svc.org.id']).toBe(org);
      expect(batch.resource['service.namespace']).toBe(org);
      for (const rec of batch.records) expect(rec.id.startsWith(org === 'org_globex' ? 'globex' : 'acme')).toBe(true);
      expect(batch.records.length).toBeLessThanOrEqual(50);
    }
    for (const req of receiver.batches().filter((r) => r.path === '/json')) verifySignature(req, secret);
    // A secret given without the whsec_ prefix is used as its UTF-8 bytes.
    const plainKey = Buffer.from('a-plain-secret-of-some-length').toString('base64');
    for (const req of receiver.batches().filter((r) => r.path === '/ndjson')) verifySignature(req, `whsec_${plainKey}`);
    expect(() => verifySignature(receiver.batches().find((r) => r.path === '/ndjson')!, secret)).toThrow();

    const resources = new Set(receiver.batches().filter((r) => r.path === '/json').map((r) => parseBatch(r).resource['service.instance.id']));
    expect(resources).toEqual(new Set(['agt_support', 'agt_sales']));
  });

  it('records a delivery per attempt, listed newest first with a working cursor', async () => {
    // Receipt comes before accounting: wait until every batch's delivery record is written.
    const all = await waitFor(async () => {
      const rows: { id: string; recordCount: number }[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { deliveries: { id: string; recordCount: number }[]; nextCursor: string | null } } = await app.request('GET', `${ORG}/${ndjsonDrainId}/deliveries?kind=batch&limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: 'lk_acme_manage' });
        rows.push(...page.body.deliveries);
        cursor = page.body.nextCursor;
      } while (cursor);
      return rows.reduce((n, d) => n + d.recordCount, 0) >= 240 ? rows : undefined;
    }, { what: 'delivery records of every batch', timeoutMs: 5000 });
    expect(new Set(all.map((d) => d.id)).size).toBe(all.length);
    expect(all.reduce((n, d) => n + d.recordCount, 0)).toBe(240);
    // Once every batch is accounted for, the first page of two is newest first and points at the rest.
    expect(all.length).toBeGreaterThan(2);
    const first = await app.request('GET', `${ORG}/${ndjsonDrainId}/deliveries?kind=batch&limit=2`, { token: 'lk_acme_manage' });
    expect(first.status).toBe(200);
    expect(first.body.deliveries).toHaveLength(2);
    const [d0, d1] = first.body.deliveries;
    expect(d0.startedAt >= d1.startedAt).toBe(true);
    expect(d0).toMatchObject({ kind: 'batch', ok: true, statusCode: 200, attempt: 1, drainId: ndjsonDrainId });
    expect(d0.bytesCompressed).toBeLessThan(d0.bytes);
    expect(typeof first.body.nextCursor).toBe('string');
    const health = await waitFor(async () => {
      const h = (await app.request('GET', `${ORG}/${ndjsonDrainId}`, { token: 'lk_acme_manage' })).body.health;
      return h.deliveredCount24h >= 240 ? h : undefined;
    }, { what: 'health counters', timeoutMs: 5000 });
    expect(health.deliveredCount24h).toBe(240);
    expect(health.hourly[23].delivered).toBe(240);
    expect(health.lastStatusCode).toBe(200);
  });

  it('counts malformed source messages as dead letters and keeps going', async () => {
    await app.writeRaw([
      { orgId: 'org_acme', payload: 'not json at all' },
      { orgId: 'org_acme', payload: JSON.stringify({ id: 'x', orgId: 'org_acme' }) },
    ]);
    const good = [...syntheticRecords(5, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }] }], idPrefix: 'after-bad' })];
    await app.writeRaw(good.map((r) => ({ orgId: r.orgId, payload: JSON.stringify(r) })));
    await waitFor(() => receiver.batches().some((r) => r.path === '/json' && parseBatch(r).records.some((x) => x.id === 'after-bad-4')), { what: 'records after the bad ones' });
    const letters = await app.store.deadLetters.recent(10);
    expect(letters.map((l) => l.reason)).toEqual(expect.arrayContaining(['not valid JSON', 'agentId must be a non-empty string']));
    const metrics = await (await fetch(app.workerMetricsUrl)).text();
    expect(metrics).toMatch(/logdrain_records_dead_lettered_total\{reason="not_json",role="(all|worker)"\} 1/);
  });

  it('rejects ingest records of another organization or breaking the record rules, per index', async () => {
    const [rec] = [...syntheticRecords(1, { orgs: [{ orgId: 'org_globex', agents: [{ id: 'agt_globex', name: 'g' }] }] })];
    const res = await app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: [rec, { ...rec, orgId: 'org_acme', severity: 'loud' }] });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(0);
    expect(res.body.rejected.map((r: { index: number }) => r.index)).toEqual([0, 1]);
    const scope = await app.request('POST', '/internal/records', { token: 'lk_acme_manage', body: [] });
    expect(scope.status).toBe(403);
    expect(scope.body.requiredScope).toBe('logs:ingest');
  });
});
