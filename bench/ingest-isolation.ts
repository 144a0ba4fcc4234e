/**
 * Ingest isolation benchmark: `npm run bench:ingest`.
 *
 * What one organization's large ingests cost the others' requests on the same process. logdrain
 * runs as operators run it, a child process of `dist/cli.js`: `start` on the embedded store (a
 * data directory on disk; its worker consumes the queue and writes the platform copy on the same
 * thread as the API), and `serve` on a fresh Postgres database (the API alone; its queue is a
 * Postgres table). In each mode two probes are offered at fixed rates, open loop (a probe's time
 * runs from when it was due, so a stalled process is charged for every probe it held up, not once):
 * `GET /healthz`, and another organization's `GET` of one of its drains. They run first on the
 * idle process, after two seconds of the same probes not measured (a route's first
 * answers compile its serializers), then while a child process (bench/ingest-load.ts) keeps four 15 MB ingests in
 * flight (60 records of 240 KB a body, each loop posting its next body when the last is answered).
 * The longest probe time is the longest the process kept a request waiting: an event-loop stall
 * seen from outside. A control, a bare node:http server in a process of its own, is probed the same
 * way in every phase: on a shared machine its figures show what the machine did to any process.
 *
 * Environment: BENCH_INGEST_MODES (embedded,postgres), BENCH_INGEST_SECONDS (15, the loaded phase),
 * BENCH_INGEST_IDLE_SECONDS (5), BENCH_INGEST_CONCURRENCY (4), BENCH_INGEST_RECORDS (60),
 * BENCH_INGEST_RECORD_BYTES (245760), BENCH_INGEST_NODE_ARGS (node options of the measured process, space
 * separated, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_INGEST_TRACE_DIR (where the measured process's stdout lines
 * that are not its JSON log, such as `--trace-gc`'s, are written, `<mode>.log`, and its stall monitor's file,
 * `<mode>-stalls.json`, for bench/stall-report.ts), BENCH_INGEST_ENV (settings of the
 * measured process, `NAME=value,...`), BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import { spawn, execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { spawnLogdrain, type LogdrainProcess } from '../test/helpers/processes.js';
import { createTestDatabase } from '../test/helpers/postgres.js';
import type { IngestLoadResult, IngestLoadSpec } from './ingest-load.js';

type Mode = 'embedded' | 'postgres';

const MODES = (process.env.BENCH_INGEST_MODES ?? 'embedded,postgres').split(',').map((m) => m.trim()).filter(Boolean) as Mode[];
const LOAD_SECONDS = Number(process.env.BENCH_INGEST_SECONDS ?? 15);
const IDLE_SECONDS = Number(process.env.BENCH_INGEST_IDLE_SECONDS ?? 5);
const WARMUP_SECONDS = 2;
const CONCURRENCY = Number(process.env.BENCH_INGEST_CONCURRENCY ?? 4);
const RECORDS = Number(process.env.BENCH_INGEST_RECORDS ?? 60);
const RECORD_BYTES = Number(process.env.BENCH_INGEST_RECORD_BYTES ?? 240 * 1024);
const NODE_ARGS = (process.env.BENCH_INGEST_NODE_ARGS ?? '').split(' ').filter(Boolean);
const TRACE_DIR = process.env.BENCH_INGEST_TRACE_DIR;
const EXTRA_ENV = Object.fromEntries((process.env.BENCH_INGEST_ENV ?? '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SEED_FILE = fileURLToPath(new URL('../test/fixtures/seed-acme.json', import.meta.url));
const LOAD_SCRIPT = fileURLToPath(new URL('./ingest-load.ts', import.meta.url));
/** The organization that ingests, and the other one whose drain is read. */
const INGEST = { token: 'lk_acme_ingest', orgId: 'org_acme', agentId: 'agt_support', agentName: 'support-bot' };
const OTHER = { token: 'lk_globex_manage', drains: '/admin/orgs/org_globex/log-drains' };
/** Probe periods: /healthz every 20 ms, the drain GET every 50 ms. */
const HEALTHZ_EVERY_MS = 20;
const DRAIN_EVERY_MS = 50;
const TARGET_HEALTHZ_P99_MS = 100;
const TARGET_DRAIN_P99_MS = 250;
/** The longest stretch of the API thread's own synchronous work in one turn, under the ingests. */
const TARGET_TURN_CPU_MS = 20;
const STALL_MONITOR = fileURLToPath(new URL('./stall-monitor.mjs', import.meta.url));
/** The monotonic clock the stall monitor notes its turns by (µs), shared by every process of the machine. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * The measured process's turns held past 20 ms in the loaded phase, from bench/stall-monitor.mjs:
 * wall time (what a request waited, the machine's doing included) and the CPU time the API's thread
 * itself ran meanwhile (its own synchronous work, collections included), with the collections
 * that fell inside.
 */
interface Turns {
  over20WallMs: number;
  over20CpuMs: number;
  maxCpuMs: number;
  longest: { ms: number; cpuMs: number; gcs: string[] }[];
  fullCollections: number;
  fullCollectionMsMax: number;
}

function turnsOf(file: string, fromUs: number, toUs: number): Turns | undefined {
  if (!existsSync(file)) return undefined;
  const report = JSON.parse(readFileSync(file, 'utf8')) as {
    stalls: { startUs: number; endUs: number; ms: number; cpuMs?: number }[];
    gcs: { startUs: number; ms: number; kind?: number }[];
  };
  const kinds: Record<number, string> = { 1: 'scavenge', 4: 'mark-compact', 8: 'incremental marking', 16: 'weak callbacks' };
  const stalls = report.stalls.filter((s) => s.startUs >= fromUs && s.startUs < toUs);
  const gcs = report.gcs.filter((g) => g.startUs >= fromUs && g.startUs < toUs);
  const full = gcs.filter((g) => g.kind === 4);
  const cpu = (s: { cpuMs?: number }) => s.cpuMs ?? Number.NaN;
  return {
    over20WallMs: stalls.length,
    over20CpuMs: stalls.filter((s) => cpu(s) > TARGET_TURN_CPU_MS).length,
    maxCpuMs: stalls.reduce((m, s) => Math.max(m, cpu(s)), 0),
    longest: [...stalls].sort((a, b) => cpu(b) - cpu(a)).slice(0, 5).map((s) => ({
      ms: s.ms,
      cpuMs: cpu(s),
      gcs: gcs.filter((g) => g.startUs >= s.startUs - 1000 && g.startUs <= s.endUs).map((g) => `${kinds[g.kind ?? 0] ?? g.kind} ${g.ms}`),
    })),
    fullCollections: full.length,
    fullCollectionMsMax: full.reduce((m, g) => Math.max(m, g.ms), 0),
  };
}

for (const m of MODES) if (m !== 'embedded' && m !== 'postgres') throw new Error(`BENCH_INGEST_MODES: unknown mode ${m}`);

interface ProbeStats {
  count: number; failed: number; failures: string[]; p50: number; p99: number; max: number;
  /** The five slowest probes: when each was due (ms into the phase) and how long it took. */
  slowest: { dueAtMs: number; ms: number }[];
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/** Offers GETs of `path` every `everyMs` until stopped; each one timed from when it was due. */
function probe(base: string, path: string, everyMs: number, token?: string): { stop(): Promise<ProbeStats> } {
  const dispatcher = new Agent({ connections: 256, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const times: number[] = [];
  const dues: number[] = [];
  const pending = new Set<Promise<void>>();
  let failed = 0;
  const failures: string[] = [];
  const fail = (why: string) => {
    failed++;
    if (failures.length < 5) failures.push(why);
  };
  let stopped = false;
  const start = performance.now();
  let n = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    // Every probe due by now is sent now (a timer held up by this process's own work does not
    // thin the probes out), timed from when it was due.
    const now = performance.now();
    while (!stopped && start + n * everyMs <= now) {
      const due = start + n * everyMs;
      n++;
      const p = request(base + path, { dispatcher, headers: token ? { authorization: `Bearer ${token}` } : {} })
        .then(async (res) => {
          await res.body.text();
          if (res.statusCode !== 200) fail(`status ${res.statusCode}`);
          times.push(performance.now() - due);
          dues.push(due - start);
        }, (e: Error) => fail(e.message))
        .finally(() => pending.delete(p));
      pending.add(p);
    }
    if (!stopped) timer = setTimeout(tick, Math.max(0, start + n * everyMs - performance.now()));
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(pending);
      await dispatcher.close();
      const sorted = [...times].sort((a, b) => a - b);
      const slowest = times.map((ms, i) => ({ dueAtMs: Math.round(dues[i]!), ms: Math.round(ms) })).sort((a, b) => b.ms - a.ms).slice(0, 5);
      return { slowest, count: sorted.length, failed, failures, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN };
    },
  };
}

/**
 * The control: a bare node:http server in a process of its own answering `GET /healthz`, probed
 * beside logdrain in every phase. logdrain's figures over the control's show what logdrain added;
 * the control's own show what the shared machine did to any process.
 */
function startControl(): Promise<{ base: string; stop(): void }> {
  const child = spawn(process.execPath, ['-e', `
    const s = require('node:http').createServer((q, r) => r.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'));
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    createInterface({ input: child.stdout }).once('line', (port) => resolve({ base: `http://127.0.0.1:${port.trim()}`, stop: () => void child.kill() }));
  });
}

async function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Runs the ingest load; resolves `started` when its first bodies are on their way, `done` with its result. */
function ingestLoad(spec: IngestLoadSpec): { started: Promise<void>; done: Promise<IngestLoadResult> } {
  const child = spawn(process.execPath, ['--import', 'tsx', LOAD_SCRIPT, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let onStarted!: () => void;
  const started = new Promise<void>((r) => (onStarted = r));
  let result: IngestLoadResult | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const parsed = JSON.parse(line) as { started?: true } & IngestLoadResult;
    if (parsed.started) onStarted();
    else result = parsed;
  });
  const done = new Promise<IngestLoadResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`ingest load exited ${code}: ${err.slice(-2000)}`))));
  });
  return { started, done };
}

interface ModeResult {
  role: 'start' | 'serve';
  idle: { healthz: ProbeStats; drainGet: ProbeStats; control: ProbeStats };
  loaded: { healthz: ProbeStats; drainGet: ProbeStats; control: ProbeStats; ingest: IngestLoadResult; turns?: Turns };
}

async function measureMode(mode: Mode): Promise<ModeResult> {
  const role = mode === 'embedded' ? 'start' : 'serve';
  const db = mode === 'postgres' ? await createTestDatabase(ADMIN_URL, 'logdrain_bench_ingest') : undefined;
  const dataDir = mode === 'embedded' ? mkdtempSync(join(tmpdir(), 'logdrain-bench-ingest-')) : undefined;
  let proc: LogdrainProcess | undefined;
  const stallsFile = join(tmpdir(), `logdrain-bench-stalls-${process.pid}-${mode}.json`);
  rmSync(stallsFile, { force: true });
  let loadedUs: [number, number] | undefined;
  let result: Omit<ModeResult, 'loaded'> & { loaded: Omit<ModeResult['loaded'], 'turns'> } | undefined;
  const control = await startControl();
  try {
    proc = spawnLogdrain([role], {
      PORT: '0', HOST: '127.0.0.1', SEED_FILE, LOG_LEVEL: 'info',
      DRAIN_RATE_LIMIT_READ_PER_MIN: '1000000000', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '1000000000',
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost',
      ...(db ? { DATABASE_URL: db.url } : { DATA_DIR: dataDir! }),
      STALL_MONITOR_FILE: stallsFile,
      ...EXTRA_ENV,
    }, ['--import', STALL_MONITOR, ...NODE_ARGS]);
    const started = await proc.waitForEvent('process.started', 120_000);
    const base = `http://127.0.0.1:${started.port as number}`;

    const created = await call(base, 'POST', OTHER.drains, OTHER.token, { name: 'bench-other-org', type: 'http', endpoint: 'https://localhost:9/x' });
    if (created.status !== 201) throw new Error(`${mode}: creating the other organization's drain answered ${created.status} ${JSON.stringify(created.json)}`);
    const drainPath = `${OTHER.drains}/${(created.json as { id: string }).id}`;
    const read = await call(base, 'GET', drainPath, OTHER.token);
    if (read.status !== 200) throw new Error(`${mode}: reading the drain answered ${read.status}`);

    const phase = async (during: () => Promise<void>) => {
      const healthz = probe(base, '/healthz', HEALTHZ_EVERY_MS);
      const drainGet = probe(base, drainPath, DRAIN_EVERY_MS, OTHER.token);
      const controlHealthz = probe(control.base, '/healthz', HEALTHZ_EVERY_MS);
      await during();
      return { healthz: await healthz.stop(), drainGet: await drainGet.stop(), control: await controlHealthz.stop() };
    };

    // Warm-up, not measured: the first answers of a route compile its serializers (one ingest of
    // one large record compiles the ingest route's).
    const warm = await fetch(`${base}/internal/records`, {
      method: 'POST', headers: { authorization: `Bearer ${INGEST.token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ id: 'warm-up', orgId: INGEST.orgId, agentId: INGEST.agentId, agentName: INGEST.agentName, environment: 'production', source: 'mcp', event: 'call', severity: 'info', timestamp: new Date().toISOString(), executionId: 'exe-warm', message: 'x'.repeat(RECORD_BYTES - 400) }]),
    });
    if (warm.status !== 202) throw new Error(`${mode}: the warm-up ingest answered ${warm.status} ${await warm.text()}`);
    await phase(() => new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000)));
    process.stderr.write(`${mode}: idle probes (${IDLE_SECONDS} s)\n`);
    const idle = await phase(() => new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000)));

    process.stderr.write(`${mode}: probes under ${CONCURRENCY} concurrent ingests of ${RECORDS} x ${RECORD_BYTES} bytes (${LOAD_SECONDS} s)\n`);
    const load = ingestLoad({ url: `${base}/internal/records`, ...INGEST, concurrency: CONCURRENCY, seconds: LOAD_SECONDS, records: RECORDS, recordBytes: RECORD_BYTES });
    await load.started;
    let ingest!: IngestLoadResult;
    const loadedFrom = monotonicUs();
    const loaded = await phase(async () => {
      ingest = await load.done;
    });
    loadedUs = [loadedFrom, monotonicUs()];
    // Failures are reported, not thrown: a process that froze is what this measures, and the
    // figures of a run that failed requests are kept (and count as targets not met).
    if (ingest.requests === 0 || Object.keys(ingest.statusCodes).some((c) => c !== '202') || ingest.rejected > 0) {
      process.stderr.write(`${mode}: not every ingest answered 202 with no record rejected: ${JSON.stringify(ingest)}\n`);
    }
    for (const [phaseName, stats] of Object.entries({ idle, loaded })) {
      for (const [name, s] of Object.entries(stats)) {
        if (s.failed > 0) process.stderr.write(`${mode}: ${s.failed} ${phaseName} ${name} probes failed: ${s.failures.join('; ')}\n`);
      }
    }
    result = { role, idle, loaded: { ...loaded, ingest } };
  } finally {
    if (proc) {
      proc.kill('SIGTERM');
      await proc.exited;
      if (TRACE_DIR) {
        mkdirSync(TRACE_DIR, { recursive: true });
        writeFileSync(join(TRACE_DIR, `${mode}.log`), proc.stderr.join('\n') + '\n');
      }
    }
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    control.stop();
  }
  // The monitor writes its file as the process exits.
  const turns = loadedUs ? turnsOf(stallsFile, ...loadedUs) : undefined;
  if (TRACE_DIR && existsSync(stallsFile)) writeFileSync(join(TRACE_DIR, `${mode}-stalls.json`), readFileSync(stallsFile));
  rmSync(stallsFile, { force: true });
  return { ...result!, loaded: { ...result!.loaded, turns } };
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const loadavgStart = loadavg();
const results: Partial<Record<Mode, ModeResult>> = {};
for (const mode of MODES) results[mode] = await measureMode(mode);

const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
console.table(MODES.flatMap((mode) => {
  const r = results[mode]!;
  const names = { healthz: 'GET /healthz', drainGet: "other org's drain GET", control: 'control: GET /healthz of a bare process' };
  return (['idle', 'loaded'] as const).flatMap((phase) => (['healthz', 'drainGet', 'control'] as const).map((probeName) => {
    const s = r[phase][probeName];
    return { mode: `${mode} (${r.role})`, phase, probe: names[probeName], probes: s.count, 'p50 ms': f(s.p50), 'p99 ms': f(s.p99), 'max ms': f(s.max), failed: s.failed };
  }));
}));
for (const mode of MODES) {
  const i = results[mode]!.loaded.ingest;
  console.log(`${mode}: ${i.requests} ingests of ${(i.bodyBytes / 2 ** 20).toFixed(1)} MiB answered in ${i.seconds.toFixed(1)} s (${i.accepted} records accepted), ingest p50 ${f(i.latencyMs.p50)} ms, max ${f(i.latencyMs.max)} ms`);
  const t = results[mode]!.loaded.turns;
  if (t) {
    console.log(`${mode}: turns held over 20 ms: ${t.over20WallMs} by the clock, ${t.over20CpuMs} with over 20 ms of the API thread's own CPU (the most ${f(t.maxCpuMs)} ms); ${t.fullCollections} full collections, the longest ${f(t.fullCollectionMsMax)} ms`);
    for (const l of t.longest) console.log(`  ${f(l.ms)} ms held, ${f(l.cpuMs)} ms of CPU${l.gcs.length ? `, ${l.gcs.join(', ')}` : ''}`);
  }
}
const targets = MODES.flatMap((mode) => {
  const l = results[mode]!.loaded;
  const ingestOk = l.ingest.requests > 0 && Object.keys(l.ingest.statusCodes).every((c) => c === '202') && l.ingest.errors.length === 0;
  return [
    { target: `${mode}: every ingest answered 202 and every probe 200`, measured: l.ingest.requests, threshold: 0, met: ingestOk && l.healthz.failed === 0 && l.drainGet.failed === 0 },
    { target: `${mode}: GET /healthz p99 at most ${TARGET_HEALTHZ_P99_MS} ms under the ingests`, measured: l.healthz.p99, threshold: TARGET_HEALTHZ_P99_MS, met: l.healthz.p99 <= TARGET_HEALTHZ_P99_MS },
    { target: `${mode}: other organization's drain GET p99 at most ${TARGET_DRAIN_P99_MS} ms under the ingests`, measured: l.drainGet.p99, threshold: TARGET_DRAIN_P99_MS, met: l.drainGet.p99 <= TARGET_DRAIN_P99_MS },
    { target: `${mode}: no turn with over ${TARGET_TURN_CPU_MS} ms of the API thread's own work under the ingests`, measured: l.turns?.maxCpuMs ?? Number.NaN, threshold: TARGET_TURN_CPU_MS, met: l.turns !== undefined && l.turns.maxCpuMs <= TARGET_TURN_CPU_MS },
  ];
});
for (const t of targets) console.log(`${t.met ? 'MET    ' : 'NOT MET'} ${t.target}${t.threshold > 0 ? `: ${f(t.measured)}` : ''}`);

mkdirSync(new URL('./results', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/ingest-isolation.json', import.meta.url), JSON.stringify({
  when: new Date().toISOString(),
  commit,
  node: process.version,
  machine: { cpu: cpus()[0]?.model, cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) },
  loadavgAtStart: loadavgStart,
  loadavgAtEnd: loadavg(),
  settings: { modes: MODES, loadSeconds: LOAD_SECONDS, idleSeconds: IDLE_SECONDS, concurrency: CONCURRENCY, records: RECORDS, recordBytes: RECORD_BYTES, healthzEveryMs: HEALTHZ_EVERY_MS, drainGetEveryMs: DRAIN_EVERY_MS },
  control: 'GET /healthz of a bare node:http server in its own process, probed beside logdrain in every phase: what the shared machine did to any process',
  method: 'probes offered at fixed rates, open loop, each timed from when it was due; idle first, then while the ingest load runs; max is the longest a probe waited',
  modes: results,
  targets,
}, null, 2) + '\n');
console.log('written bench/results/ingest-isolation.json');
