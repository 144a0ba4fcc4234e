/**
 * Log read routes over one million stored rows: the first page of
 * the agent and organization routes, a filtered page, a deep keyset page,
 * a deprecated numbered page, and the full NDJSON export, all through HTTP
 * against the real API on Postgres (a fresh database, dropped afterwards).
 *
 * Baseline in the same run: one `select 1` round trip through the same API
 * process's pool is not reachable over HTTP, so the baseline is an HTTP
 * request the API answers after the same authentication and rate-limit
 * queries but with no log query (a refused `limit=0`).
 *
 *   npm run bench:logs            (ROWS=1000000 by default)
 */
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import pg from 'pg';
import { loadConfig } from '../src/config/config.js';
import { run } from '../src/commands/run.js';
import { silentLogger } from '../src/telemetry/logger.js';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AGENTS = 10;
const DAYS = 3;

const dbName = `logdrain_bench_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database ${dbName}`);
const dbUrl = new URL(ADMIN_URL);
dbUrl.pathname = `/${dbName}`;

const seedDir = mkdtempSync(join(tmpdir(), 'logdrain-bench-'));
const seedFile = join(seedDir, 'seed.json');
writeFileSync(seedFile, JSON.stringify({
  orgs: [{ id: 'org_bench', name: 'Bench', plan: 'standard', archived: false }],
  users: [{ id: 'usr_b', email: 'b@bench.test', memberships: [{ orgId: 'org_bench', role: 'admin' }] }],
  agents: Array.from({ length: AGENTS }, (_, i) => ({ id: `agt_${i}`, orgId: 'org_bench', name: `bot-${i}`, visibility: 'org', version: '1' })),
  apiKeys: [{ key: 'lk_bench_read', ownerId: 'usr_b', orgId: 'org_bench', scopes: ['logs:read'], agentGrants: [], status: 'active' }],
  sessions: [],
}));

const config = loadConfig({
  PORT: '0', HOST: '127.0.0.1', DATABASE_URL: dbUrl.toString(), SEED_FILE: seedFile, LOGS_READ_RATE_LIMIT_PER_MIN: '100000000', LOG_LEVEL: 'silent',
});
const app = await run('serve', config, silentLogger());
const base = `http://127.0.0.1:${app.port}`;

try {
  // Day partitions for the data's days, then the rows in one statement per day (generate_series).
  await app.store.logs.maintain(7);
  const now = Date.now();
  const perDay = Math.ceil(ROWS / DAYS);
  const loadStart = performance.now();
  // The records through the repository, as the worker stores them (pages of 500), a flush of 5,000 at a time.
  const SOURCES = ['mcp', 'skill', 'execution', 'agent_error', 'user_message', 'agent_response'];
  const SEVERITIES = ['debug', 'info', 'warn', 'error'] as const;
  for (let d = 0; d < DAYS; d++) {
    const count = Math.min(perDay, ROWS - d * perDay);
    const dayEnd = now - d * 86_400_000;
    const step = Math.max(1, Math.floor(86_000_000 / count));
    for (let from = 1; from <= count; from += 5000) {
      const chunk = Array.from({ length: Math.min(5000, count - from + 1) }, (_, i) => {
        const g = from + i;
        return {
          id: `r${d}-${g}`, orgId: 'org_bench', agentId: `agt_${g % AGENTS}`, agentName: `bot-${g % AGENTS}`, agentVersion: '1',
          environment: g % 5 === 0 ? ('sandbox' as const) : ('production' as const), source: SOURCES[g % 6]!, event: 'call',
          severity: SEVERITIES[g % 4]!, timestamp: new Date(dayEnd - 2 - g * step).toISOString(), executionId: `exe-${Math.floor(g / 20)}`,
          message: `tool call ${g} finished with a result of moderate length for a log line`, attributes: { tool: 'search', ms: 12 },
        };
      });
      await app.store.logs.insert(chunk, 7);
    }
  }
  await app.store.sql.exec('analyze agent_log_pages');
  const [{ n }] = (await app.store.sql.query<{ n: number }>("select coalesce(sum(records), 0)::int as n from agent_log_pages where org_id = 'org_bench'")) as [{ n: number }];
  const loadSeconds = (performance.now() - loadStart) / 1000;
  console.log(`loaded ${n} rows in ${loadSeconds.toFixed(1)} s`);

  const get = async (path: string, status = 200): Promise<unknown> => {
    const res = await fetch(base + path, { headers: { authorization: 'Bearer lk_bench_read' } });
    const body = await res.text();
    if (res.status !== status) throw new Error(`${path}: ${res.status} ${body.slice(0, 200)}`);
    return body;
  };
  const middle = JSON.parse((await get('/developer/agents/agt_3/logs?limit=100&since=2d&until=1d')) as string) as { nextCursor: string };

  const bench = new Bench({ time: 2000, warmupTime: 500 });
  bench
    .add('baseline: authenticated request, refused before any log query', () => get('/developer/agents/agt_3/logs?limit=0', 400))
    .add('agent route, first page (limit 20)', () => get('/developer/agents/agt_3/logs'))
    .add('agent route, first page (limit 100)', () => get('/developer/agents/agt_3/logs?limit=100'))
    .add('org route, first page (limit 20)', () => get('/admin/orgs/org_bench/logs'))
    .add('org route, logSource=agent_error&environment=sandbox', () => get('/admin/orgs/org_bench/logs?logSource=agent_error&environment=sandbox'))
    .add('agent route, keyset page a day deep (cursor)', () => get(`/developer/agents/agt_3/logs?limit=100&cursor=${middle.nextCursor}`))
    .add('agent route, deprecated page=50 (offset 980)', () => get('/developer/agents/agt_3/logs?page=50'));
  await bench.run();

  const rows = bench.tasks.map((t) => {
    const r = t.result as { latency?: { mean: number; p50?: number; p99?: number } } | undefined;
    return { name: t.name, meanMs: r?.latency?.mean ?? NaN, p50Ms: r?.latency?.p50 ?? NaN, p99Ms: r?.latency?.p99 ?? NaN };
  });
  const baseline = rows[0]!.meanMs;

  // The whole organization exported: rows per second and the API's resident memory before and after.
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const exportStart = performance.now();
  const res = await fetch(`${base}/admin/orgs/org_bench/logs/download`, { headers: { authorization: 'Bearer lk_bench_read' } });
  let lines = 0;
  let bytes = 0;
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    const text = decoder.decode(chunk, { stream: true });
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  }
  const exportSeconds = (performance.now() - exportStart) / 1000;
  clearInterval(sampler);
  if (lines !== n) throw new Error(`export gave ${lines} lines for ${n} rows`);

  console.table(rows.map((r) => ({ case: r.name, 'mean ms': r.meanMs.toFixed(2), 'p50 ms': r.p50Ms.toFixed(2), 'p99 ms': r.p99Ms.toFixed(2), 'ratio to baseline': (r.meanMs / baseline).toFixed(2) })));
  const exportFigures = {
    rows: lines, seconds: exportSeconds, rowsPerSecond: lines / exportSeconds, megabytes: bytes / 1e6,
    rssBeforeMB: rssBefore / 1e6, peakRssMB: peakRss / 1e6, rssGrowthMB: (peakRss - rssBefore) / 1e6,
  };
  console.log(`export: ${lines} lines, ${(bytes / 1e6).toFixed(0)} MB in ${exportSeconds.toFixed(1)} s (${Math.round(lines / exportSeconds)} rows/s); process RSS ${(rssBefore / 1e6).toFixed(0)} MB before, peak ${(peakRss / 1e6).toFixed(0)} MB (client and server in one process)`);

  mkdirSync(new URL('./results', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/logs-read.json', import.meta.url), JSON.stringify({
    when: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    storedRows: n, loadSeconds,
    baseline: 'an authenticated, rate-limited request refused before any log query',
    cases: rows.map((r) => ({ ...r, ratioToBaseline: r.meanMs / baseline })),
    export: exportFigures,
  }, null, 2) + '\n');
} finally {
  await app.stop();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
