/**
 * The operator's metrics (docs/operations.md, Metrics): after a real delivery
 * cycle every catalogue metric is exposed with the figures the cycle
 * produced, labels stay bounded (no org or drain id, no secret), the
 * scrape-time gauges follow the store, and docs/operations.md documents
 * exactly the metrics the registry has.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { record } from '../../helpers/records.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';
const SECRET = 'metrics-secret-value-5d1c8e';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text exposition format, as far as prom-client writes it. */
function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

const sum = (samples: Sample[], name: string, where: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

describe('metrics after a delivery cycle', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  let drainId: string;
  const scrape = async () => parseExposition(await (await fetch(`${app.base}/metrics`)).text());

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({ DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '1000' });
    const created = await app.request('POST', ORG, {
      token: T,
      body: {
        name: 'metered', type: 'http', endpoint: `${receiver.url}/m`, minSeverity: 'debug', sampling: { debug: 0.5 }, secret: SECRET,
        headers: [{ name: 'X-Key', value: SECRET }], scrubRules: [{ id: 'acct', pattern: 'acct_\\d+' }],
      },
    });
    drainId = created.body.id;
    await app.request('POST', `${ORG}/${drainId}/verify`, { token: T });
    await waitFor(async () => (await app.request('GET', `${ORG}/${drainId}`, { token: T })).body.state === 'healthy', { what: 'verified' });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  it('counts what was consumed, selected, sampled out, scrubbed, delivered and stored', async () => {
    const recs = [
      ...Array.from({ length: 40 }, (_, i) => record({ severity: 'info', message: i < 10 ? `charged acct_${i} twice acct_9${i}` : 'plain' })),
      ...Array.from({ length: 200 }, (_, i) => record({ severity: 'debug', executionId: `exe-m-${i}` })),
    ];
    await app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: recs });
    await app.store.queue.enqueue([{ orgId: 'org_acme', payload: '{not json' }]);
    const delivered = () => receiver.batches().filter((r) => r.path === '/m').length;
    await waitFor(() => delivered() > 0, { what: 'a delivery' });
    const m = await waitFor(async () => {
      const s = await scrape();
      // Settled: nothing in flight or parked (on a loaded machine a slow attempt can park a batch,
      // and the pump removes its rows just after counting it delivered).
      const settled = sum(s, 'logdrain_records_in_flight') === 0 && sum(s, 'logdrain_backlog_records') === 0 && sum(s, 'logdrain_logs_stored_total') >= recs.length;
      return settled && sum(s, 'logdrain_records_delivered_total') >= sum(s, 'logdrain_records_selected_total') ? s : undefined;
    }, { what: 'settled counters' });

    expect(sum(m, 'logdrain_records_consumed_total', { source: 'embedded' })).toBe(recs.length + 1);
    expect(sum(m, 'logdrain_records_dead_lettered_total', { reason: 'not_json' })).toBe(1);
    const selected = sum(m, 'logdrain_records_selected_total', { drain_type: 'http' });
    const sampledOut = sum(m, 'logdrain_records_sampled_out_total', { drain_type: 'http' });
    expect(selected + sampledOut).toBe(recs.length);
    expect(sampledOut).toBeGreaterThan(50);
    expect(sampledOut).toBeLessThan(150);
    expect(sum(m, 'logdrain_records_scrubbed_total', { drain_type: 'http' })).toBe(10);
    expect(sum(m, 'logdrain_scrub_hits_total', { drain_type: 'http' })).toBe(20);
    expect(sum(m, 'logdrain_records_delivered_total', { drain_type: 'http' })).toBe(selected);
    expect(sum(m, 'logdrain_batches_total', { drain_type: 'http', kind: 'batch', outcome: 'ok', error_class: 'none' })).toBeGreaterThan(0);
    expect(sum(m, 'logdrain_bytes_sent_total', { drain_type: 'http', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sum(m, 'logdrain_delivery_latency_seconds_count', { drain_type: 'http', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sum(m, 'logdrain_logs_stored_total')).toBe(recs.length);
    expect(sum(m, 'logdrain_records_in_flight')).toBe(0);
    expect(sum(m, 'logdrain_drains', { drain_type: 'http', state: 'healthy' })).toBe(1);
    expect(sum(m, 'logdrain_backlog_records', { drain_type: 'http' })).toBe(0);
    expect(sum(m, 'logdrain_buffer_horizon_seconds')).toBe(21_600);
    expect(sum(m, 'logdrain_quota_used_ratio', { drain_type: 'http' })).toBeCloseTo(selected / 10_000_000, 9);
    expect(m.some((s) => s.name === 'logdrain_nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(m.some((s) => s.name === 'logdrain_process_resident_memory_bytes')).toBe(true);
    // API requests by route template.
    expect(sum(m, 'logdrain_http_requests_total', { method: 'POST', route: '/internal/records', status_class: '2xx' })).toBe(1);
    expect(sum(m, 'logdrain_http_request_duration_seconds_count', { method: 'GET', route: '/admin/orgs/:orgId/log-drains/:drainId' })).toBeGreaterThan(0);
  });

  it('counts retries and failures by error class, and shows parked records with their age', async () => {
    await app.request('POST', `${ORG}/${drainId}/pause`, { token: T });
    await new Promise((r) => setTimeout(r, 500)); // the worker sees the pause within DRAIN_REFRESH_MS (100 ms here)
    await app.request('POST', '/internal/records', { token: 'lk_acme_ingest', body: Array.from({ length: 7 }, () => record({ severity: 'warn' })) });
    const m = await waitFor(async () => {
      const s = await scrape();
      return sum(s, 'logdrain_backlog_records', { drain_type: 'http' }) === 7 ? s : undefined;
    }, { what: 'parked records in the gauge' });
    expect(sum(m, 'logdrain_backlog_bytes', { drain_type: 'http' })).toBeGreaterThan(7 * 100);
    expect(sum(m, 'logdrain_backlog_oldest_age_seconds', { drain_type: 'http' })).toBeGreaterThanOrEqual(0);
    expect(sum(m, 'logdrain_drains', { drain_type: 'http', state: 'paused' })).toBe(1);
    expect(sum(m, 'logdrain_drains', { drain_type: 'http', state: 'healthy' })).toBe(0);

    // The destination fails: each failed attempt is a retry with its error class.
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify']) return false;
      res.writeHead(503).end('down');
      return true;
    });
    await app.request('POST', `${ORG}/${drainId}/resume`, { token: T });
    const failing = await waitFor(async () => {
      const s = await scrape();
      return sum(s, 'logdrain_delivery_retries_total', { drain_type: 'http', error_class: 'http_5xx' }) > 0 ? s : undefined;
    }, { what: 'a counted retry' });
    expect(sum(failing, 'logdrain_batches_total', { outcome: 'retry', error_class: 'http_5xx' })).toBeGreaterThan(0);
    receiver.respondWith(() => false);
  });

  it('never puts an organization id, a drain id or a secret in a label or value', async () => {
    const text = await (await fetch(`${app.base}/metrics`)).text();
    for (const needle of ['org_acme', drainId, SECRET, 'acct_1', 'lk_acme']) expect(text).not.toContain(needle);
    const labelNames = new Set(parseExposition(text).flatMap((s) => Object.keys(s.labels)));
    const allowed = ['role', 'source', 'reason', 'drain_type', 'kind', 'outcome', 'error_class', 'partition', 'method', 'route', 'status_class', 'state', 'le', 'quantile', 'type', 'space', 'kind', 'version', 'commit', 'major', 'minor', 'patch',
      // The route families' (telemetry/family-metrics.ts).
      'status', 'step_kind', 'channel', 'port', 'action'];
    for (const l of labelNames) expect(allowed, `label ${l}`).toContain(l);
  });
});

describe('per-drain gauges', () => {
  const rows = async () => [
    { drainId: 'ld_1', orgId: 'org_a', type: 'http', state: 'healthy', backlogRecords: 3, backlogBytes: 300, oldestParkedAt: new Date(Date.now() - 60_000), usageEvents: 50, usageBytes: 10 },
    { drainId: 'ld_2', orgId: 'org_b', type: 'http', state: 'degraded', backlogRecords: 4, backlogBytes: 400, oldestParkedAt: new Date(Date.now() - 120_000), usageEvents: 80, usageBytes: 10 },
  ];

  it('aggregate by drain type by default: backlog summed, age and quota at their highest', async () => {
    const metrics = createMetrics('worker');
    metrics.attach({ drainGauges: rows, quota: { eventsPerDay: 100, bytesPerDay: 1000 } });
    const m = parseExposition(await metrics.scrape());
    expect(sum(m, 'logdrain_backlog_records', { drain_type: 'http' })).toBe(7);
    expect(sum(m, 'logdrain_backlog_bytes', { drain_type: 'http' })).toBe(700);
    expect(sum(m, 'logdrain_backlog_oldest_age_seconds', { drain_type: 'http' })).toBeGreaterThanOrEqual(120);
    expect(sum(m, 'logdrain_quota_used_ratio', { drain_type: 'http' })).toBeCloseTo(0.8);
    expect(sum(m, 'logdrain_drains', { drain_type: 'http', state: 'degraded' })).toBe(1);
    expect(m.some((s) => 'drain_id' in s.labels || 'org_id' in s.labels)).toBe(false);
  });

  it('carry org_id and drain_id only when METRICS_DRAIN_LABELS opts in', async () => {
    const metrics = createMetrics('worker', { drainLabels: true });
    metrics.attach({ drainGauges: rows, quota: { eventsPerDay: 100, bytesPerDay: 1000 } });
    const m = parseExposition(await metrics.scrape());
    expect(sum(m, 'logdrain_backlog_records', { drain_id: 'ld_2', org_id: 'org_b' })).toBe(4);
    expect(sum(m, 'logdrain_quota_used_ratio', { drain_id: 'ld_1' })).toBeCloseTo(0.5);
  });
});

describe('the metric catalogue of docs/operations.md', () => {
  it('documents exactly the metrics the registry exposes', async () => {
    const operations = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
    const start = operations.indexOf('\n## Metrics\n');
    const end = operations.indexOf('\n## ', start + 1);
    const section = operations.slice(start, end < 0 ? undefined : end);
    const documented = new Set([...section.matchAll(/^\| `(logdrain_\w+)`/gm)].map((m) => m[1]!));
    const own = (await createMetrics('worker').registry.getMetricsAsJSON())
      .map((m) => m.name)
      // Process and Node.js runtime metrics (collectDefaultMetrics) are documented as a family.
      .filter((n) => !n.startsWith('logdrain_process_') && !n.startsWith('logdrain_nodejs_'));
    expect([...documented].sort()).toEqual([...new Set(own)].sort());
    expect(section).toContain('logdrain_process_');
    expect(section).toContain('logdrain_nodejs_');
  });

  it('exposes logdrain_build_info with the version and commit of the build', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    const text = await createMetrics('api').scrape();
    const line = text.split('\n').find((l) => l.startsWith('logdrain_build_info{'));
    expect(line).toMatch(new RegExp(`^logdrain_build_info\\{version="${version.replaceAll('.', '\\.')}",commit="([0-9a-f]{7,40}|unknown)",role="api"\\} 1$`));
  });
});
