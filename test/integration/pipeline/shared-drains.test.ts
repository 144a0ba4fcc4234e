/**
 * Drains that share work (one shaped record per shape group, one OTLP body
 * and its gzip for identical OTLP batches) still each receive exactly their
 * records, under their own batch ids and signatures, with their own
 * scrubbing: through the whole running service to an HTTPS receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, validateBatch, verifySignature, type HttpsReceiver } from '../../helpers/receiver.js';
import { attributesOf, decodeExportLogsRequest } from '../../helpers/otlp-decoder.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('drains sharing shaping and encoding', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  const secrets: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({ DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BATCH_MAX_RECORDS: '40', BATCH_LINGER_MS: '50' });
    const drains: [string, Record<string, unknown>][] = [
      ['a', { type: 'http', endpoint: `${receiver.url}/a` }],
      ['b', { type: 'http', endpoint: `${receiver.url}/b` }],
      ['scrubbed', { type: 'http', endpoint: `${receiver.url}/scrubbed`, scrubRules: [{ id: 'tools', pattern: 'lookup|crm' }] }],
      ['otlp1', { type: 'otlp', endpoint: `${receiver.url}/otlp1` }],
      ['otlp2', { type: 'otlp', endpoint: `${receiver.url}/otlp2` }],
    ];
    for (const [name, body] of drains) {
      const res = await app.request('POST', ORG, { token: T, body: { name, minSeverity: 'debug', ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      if (res.body.secret) secrets[name] = res.body.secret;
      await app.request('POST', `${ORG}/${res.body.id}/verify`, { token: T });
      await waitFor(async () => (await app.request('GET', `${ORG}/${res.body.id}`, { token: T })).body.state === 'healthy', { what: `${name} healthy`, timeoutMs: 20_000 });
    }
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  it('each drain receives every record once, in its own signed batches, scrubbed by its own rules', async () => {
    const agents = [{ id: 'agt_support', name: 'support-bot', version: '4' }, { id: 'agt_sales', name: 'sales-bot' }];
    const sent = [...syntheticRecords(150, { orgs: [{ orgId: 'org_acme', agents }], idPrefix: 'shared', seed: 21 })];
    const res = await app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: sent.map((r) => JSON.stringify(r)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
    expect(res.body.accepted).toBe(150);

    const at = (path: string) => receiver.batches().filter((r) => r.path === path && r.body.length > 0);
    const jsonIds = (path: string) => at(path).flatMap((r) => parseBatch(r).records.map((x) => x.id)).filter((id) => id.startsWith('shared'));
    const otlpLogs = (path: string) =>
      at(path).flatMap((r) => decodeExportLogsRequest(r.body).resourceLogs.flatMap((rl: any) => rl.scopeLogs.flatMap((s: any) => s.logRecords)))
        .filter((l: any) => String(attributesOf(l.attributes)['svc.record.id']).startsWith('shared'));
    await waitFor(() => ['/a', '/b', '/scrubbed'].every((p) => jsonIds(p).length >= 150) && ['/otlp1', '/otlp2'].every((p) => otlpLogs(p).length >= 150), { what: 'every record at every drain', timeoutMs: 30_000 });

    const ids = sent.map((r) => r.id).sort();
    for (const p of ['/a', '/b', '/scrubbed']) expect(jsonIds(p).sort()).toEqual(ids);
    for (const p of ['/otlp1', '/otlp2']) expect(otlpLogs(p).map((l: any) => attributesOf(l.attributes)['svc.record.id']).sort()).toEqual(ids);

    // Own batch ids: header and body agree, and no batch id is shared between drains.
    const batchIds = new Map<string, string>();
    for (const p of ['/a', '/b', '/scrubbed']) {
      for (const r of at(p)) {
        const batch = parseBatch(r);
        expect(validateBatch(batch), JSON.stringify(validateBatch.errors)).toBe(true);
        expect(r.headers['x-svc-batch-id']).toBe(batch.batchId);
        expect(batchIds.has(batch.batchId)).toBe(false);
        batchIds.set(batch.batchId, p);
      }
    }
    // Own signatures: each verifies with its drain's secret and not with another drain's.
    for (const [name, other] of [['a', 'b'], ['b', 'a'], ['scrubbed', 'a']] as const) {
      for (const r of at(`/${name}`)) verifySignature(r, secrets[name]!);
      expect(() => verifySignature(at(`/${name}`)[0]!, secrets[other]!)).toThrow();
    }

    // Own scrubbing: the customer rule changed that drain's records only.
    const toolsAt = (p: string) => at(p).flatMap((r) => parseBatch(r).records).filter((x) => x.id.startsWith('shared')).map((x) => (x.attributes as Record<string, unknown>)['tool.name']);
    expect(toolsAt('/a')).toEqual(expect.arrayContaining(['lookup', 'crm']));
    expect(toolsAt('/b')).toEqual(expect.arrayContaining(['lookup', 'crm']));
    expect(toolsAt('/scrubbed')).not.toContain('lookup');
    expect(toolsAt('/scrubbed')).not.toContain('crm');
    expect(toolsAt('/scrubbed')).toContain('[scrubbed]');
    const byId = (p: string) => new Map(at(p).flatMap((r) => parseBatch(r).records).map((x) => [x.id, x]));
    const [a, b] = [byId('/a'), byId('/b')];
    for (const id of ids) expect({ ...b.get(id), observedTimestamp: 0 }).toEqual({ ...a.get(id), observedTimestamp: 0 });

    // The two OTLP drains received the same messages.
    const key = (l: any) => JSON.stringify(l);
    expect(otlpLogs('/otlp2').map(key).sort()).toEqual(otlpLogs('/otlp1').map(key).sort());
  });
});
