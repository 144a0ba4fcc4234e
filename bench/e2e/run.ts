/**
 * End-to-end benchmark (`npm run bench:e2e`): the librdkafka broker, a
 * self-signed HTTPS receiver on loopback, real Postgres, and one fixed data
 * set on one topic, consumed in turn (each with a fresh consumer group) by:
 *
 *   baseline        kafkajs consume, JSON.parse, NDJSON, gzip 1, HMAC, undici POST; no drain logic
 *   peer            the OpenTelemetry JS logs SDK: BatchLogRecordProcessor, OTLP/HTTP protobuf with
 *                   gzip, the same RE2 scrub patterns in a log record processor (same work)
 *   peer-default    the same SDK as shipped: no gzip, no scrubbing (context only)
 *   logdrain        `logdrain worker`: selection, scrubbing, NDJSON, gzip, signing, delivery records,
 *                   health counters, the platform copy, offsets (drains of type http, ndjson)
 *   logdrain-otlp   the same with drains of type otlp
 *
 * then a latency run: logdrain with BATCH_LINGER_MS=100 fed at RATE records a second, measuring
 * Kafka append to the destination's 2xx. Figures: records per second, records per CPU-second of
 * the consuming process, peak RSS, bytes on the wire; ratios to the baseline and the peer of the
 * same run (machines here are shared and noisy). Results: bench/results/e2e.json.
 *
 * Data set (documented in README, Benchmarks): RECORDS records (default 100,000) of 4
 * organizations x 2 agents (8 resources), synthetic (src/produce/synthetic.ts): messages of 4 to 124
 * words (10% long), about 30% carrying a bearer token the built-in scrub pattern replaces, trace
 * ids, three attributes; severities debug to error. Each organization has one drain taking every
 * record (minSeverity debug), so every runner delivers each record once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { cpus, totalmem, tmpdir, release } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, CompressionTypes } from 'kafkajs';
import pg from 'pg';
import { startMockBroker } from '../../test/helpers/broker.js';
import { syntheticRecords } from '../../src/produce/synthetic.js';
import { loadConfig } from '../../src/config/config.js';
import { run } from '../../src/commands/run.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { startBenchReceiver, decodeArrival, type BenchReceiver } from './receiver.js';

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const RATE = Number(process.env.RATE ?? 20_000);
const LATENCY_SECONDS = Number(process.env.LATENCY_SECONDS ?? 10);
/**
 * The librdkafka mock broker keeps about 5 MB per partition and silently drops older message sets
 * beyond that, so the data set is spread over enough partitions (round-robin) to stay under it.
 */
const PARTITIONS = 24;
/** BENCH_ONLY=logdrain,baseline runs a subset (for iterating); the default runs everything. */
const ONLY = process.env.BENCH_ONLY?.split(',');
const ORGS = Array.from({ length: 4 }, (_, o) => ({
  orgId: `org_b${o}`,
  agents: Array.from({ length: 2 }, (_, a) => ({ id: `agt_b${o}_${a}`, name: `bench-bot-${o}-${a}`, version: '1' })),
}));
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const RUNNERS = fileURLToPath(new URL('./runners/', import.meta.url));
const CLK_TCK = 100;

const log = (msg: string) => process.stderr.write(`[bench:e2e] ${msg}\n`);

/** CPU seconds (user + system) and peak RSS of a live process, from /proc. */
function procFigures(pid: number): { cpuSeconds: number; peakRssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds, peakRssBytes: Number(hwm?.[1] ?? 0) * 1024 };
}

interface RunFigures {
  name: string;
  records: number;
  seconds: number;
  cpuSeconds: number;
  recordsPerSecond: number;
  recordsPerCpuSecond: number;
  peakRssMB: number;
  bytesOnWire: number;
  bytesPerRecord: number;
  posts: number;
}

function figures(name: string, records: number, seconds: number, cpuSeconds: number, peakRssBytes: number, bytesOnWire: number, posts: number): RunFigures {
  return {
    name, records, seconds, cpuSeconds, recordsPerSecond: records / seconds, recordsPerCpuSecond: records / cpuSeconds,
    peakRssMB: peakRssBytes / 1e6, bytesOnWire, bytesPerRecord: bytesOnWire / records, posts,
  };
}

/** Children die with the harness, whatever ends it. */
const children = new Set<ChildProcess>();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function spawnNode(args: string[], env: Record<string, string>): { child: ChildProcess; lines: Record<string, unknown>[]; waitLine: (pred: (l: Record<string, unknown>) => boolean, ms?: number) => Promise<Record<string, unknown>>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const lines: Record<string, unknown>[] = [];
  const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let l: Record<string, unknown>;
    try {
      l = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(l);
    if (process.env.BENCH_VERBOSE && typeof l.level === 'number' && l.level >= Number(process.env.BENCH_VERBOSE_LEVEL ?? 40)) process.stderr.write(`  | ${text}\n`);
    for (const w of [...waiters]) if (w.pred(l)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(l);
    }
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (text) => {
    stderr.push(text);
    if (process.env.BENCH_VERBOSE) process.stderr.write(`  | ${text}\n`);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child, lines, exited,
    waitLine(pred, ms = 120_000) {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out; stderr: ${stderr.slice(-5).join(' | ')}`)), ms);
        waiters.push({ pred, resolve: (l) => (clearTimeout(t), resolve(l)) });
        void exited.then((code) => reject(new Error(`exited ${code}; stderr: ${stderr.slice(-8).join(' | ')}`)));
      });
    },
  };
}

async function until(cond: () => boolean, what: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---------------------------------------------------------------------------------------------
const dbName = `logdrain_e2e_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database ${dbName}`);
const dbUrl = new URL(ADMIN_URL);
dbUrl.pathname = `/${dbName}`;
const work = mkdtempSync(join(tmpdir(), 'logdrain-e2e-'));
const receiver: BenchReceiver = await startBenchReceiver(join(work, 'cert'));
const topic = 'bench-records';
const liveTopic = 'bench-live';
const broker = await startMockBroker({ topics: [{ name: topic, partitions: PARTITIONS }, { name: liveTopic, partitions: PARTITIONS }] });
const seedFile = join(work, 'seed.json');
writeFileSync(seedFile, JSON.stringify({
  orgs: ORGS.map((o) => ({ id: o.orgId, name: o.orgId, plan: 'enterprise', archived: false })),
  users: [{ id: 'usr_bench', email: 'bench@bench.test', memberships: ORGS.map((o) => ({ orgId: o.orgId, role: 'admin' })) }],
  agents: ORGS.flatMap((o) => o.agents.map((a) => ({ id: a.id, orgId: o.orgId, name: a.name, visibility: 'org', version: '1' }))),
  apiKeys: [],
  sessions: [{ token: 'sess_bench', userId: 'usr_bench', revoked: false }],
}));
const common = { DATABASE_URL: dbUrl.toString(), NODE_EXTRA_CA_CERTS: receiver.caPath, DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost' };
const api = await run('serve', loadConfig({ ...common, PORT: '0', HOST: '127.0.0.1', SEED_FILE: seedFile, LOG_LEVEL: 'silent', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '100000', DRAIN_RATE_LIMIT_READ_PER_MIN: '100000' }), silentLogger());
const apiBase = `http://127.0.0.1:${api.port}`;
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(apiBase + path, { method, headers: { authorization: 'Bearer sess_bench', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
};

/** One drain per organization of the given kind, verified; returns their ids by org. */
async function createDrains(kind: 'ndjson' | 'otlp', prefix: string, perOrg = 1): Promise<{ orgId: string; id: string }[]> {
  const out: { orgId: string; id: string }[] = [];
  for (const o of ORGS) {
    for (let i = 0; i < perOrg; i++) {
      const body = kind === 'otlp'
        ? { name: `${prefix}-${i}`, type: 'otlp', endpoint: `${receiver.url}${prefix}/${o.orgId}/${i}/v1/logs`, minSeverity: 'debug' }
        : { name: `${prefix}-${i}`, type: 'http', format: 'ndjson', endpoint: `${receiver.url}${prefix}/${o.orgId}/${i}`, minSeverity: 'debug' };
      const d = await call('POST', `/admin/orgs/${o.orgId}/log-drains`, body);
      await call('POST', `/admin/orgs/${o.orgId}/log-drains/${d.id}/verify`);
      out.push({ orgId: o.orgId, id: d.id as string });
    }
  }
  for (const d of out) {
    for (let i = 0; ; i++) {
      const got = await call('GET', `/admin/orgs/${d.orgId}/log-drains/${d.id}`);
      if (got.state === 'healthy') break;
      if (i > 200) throw new Error(`drain ${d.id} not verified`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return out;
}
async function deleteDrains(drains: { orgId: string; id: string }[]): Promise<void> {
  for (const d of drains) await call('DELETE', `/admin/orgs/${d.orgId}/log-drains/${d.id}`);
}

const kafka = new Kafka({ clientId: 'bench-producer', brokers: broker.brokers, logLevel: logLevel.NOTHING });
const producer = kafka.producer({ allowAutoTopicCreation: false });
await producer.connect();

const results: Record<string, unknown> = {};
const runs: RunFigures[] = [];
try {
  // The data set, produced once.
  log(`producing ${RECORDS} records`);
  const records = [...syntheticRecords(RECORDS, { orgs: ORGS, idPrefix: 'e2e', seed: 2026 })];
  const sizes = records.map((r) => Buffer.byteLength(JSON.stringify(r)));
  for (let i = 0; i < records.length; i += 250) {
    await producer.send({ topic, compression: CompressionTypes.None, messages: records.slice(i, i + 250).map((r, j) => ({ key: r.orgId, partition: (i + j) % PARTITIONS, value: JSON.stringify(r) })) });
  }
  {
    const kadmin = kafka.admin();
    await kadmin.connect();
    const offsets = await kadmin.fetchTopicOffsets(topic);
    await kadmin.disconnect();
    const stored = offsets.reduce((n, o) => n + Number(o.high), 0);
    if (stored !== RECORDS) throw new Error(`the topic holds ${stored} records, not ${RECORDS}`);
    log(`topic holds ${stored} records in ${offsets.filter((o) => o.high !== '0').length} partitions`);
  }
  const secretShare = records.filter((r) => (r.message ?? '').includes('Bearer ')).length / records.length;
  sizes.sort((a, b) => a - b);
  results.dataSet = {
    records: RECORDS, organizations: ORGS.length, agents: ORGS.length * 2, partitions: PARTITIONS,
    recordBytes: { mean: sizes.reduce((a, b) => a + b, 0) / sizes.length, p50: sizes[Math.floor(sizes.length / 2)], p99: sizes[Math.floor(sizes.length * 0.99)], max: sizes.at(-1) },
    scrubbableShare: secretShare,
  };

  const kafkaEnv = { KAFKA_BROKERS: broker.bootstrap, KAFKA_TOPIC: topic };

  /** A runner script (baseline or peer) that reports its own figures in a final JSON line. */
  async function runRunner(name: string, script: string, env: Record<string, string>): Promise<RunFigures> {
    log(`run ${name}`);
    const prefix = `/${name}`;
    const p = spawnNode(['--import', 'tsx', join(RUNNERS, script)], {
      ...common, ...kafkaEnv, KAFKA_GROUP_ID: `g-${name}-${Date.now()}`, TARGET_URL: `${receiver.url}${prefix}${script.includes('otel') ? '/v1/logs' : ''}`,
      EXPECTED_RECORDS: String(RECORDS), ...env,
    });
    const report = await p.waitLine((l) => typeof l.runner === 'string', 600_000);
    await p.exited;
    const bytesOnWire = receiver.bytes(prefix);
    receiver.take(prefix);
    const f = figures(name, Number(report.records), Number(report.wallMs) / 1000, (Number(report.cpuUserMs) + Number(report.cpuSystemMs)) / 1000, Number(report.peakRssBytes), bytesOnWire, Number(report.posts));
    runs.push(f);
    return f;
  }

  /** `logdrain worker` as operators run it, measured from /proc between joining and the last 2xx. */
  async function runLogdrain(name: string, kind: 'ndjson' | 'otlp', env: Record<string, string> = {}, opts: { topicName?: string; feed?: () => Promise<void>; expected?: number; perOrg?: number } = {}): Promise<{ f: RunFigures; arrivals: ReturnType<BenchReceiver['take']> }> {
    log(`run ${name}`);
    const prefix = `/${name}`;
    const drains = await createDrains(kind, prefix, opts.perOrg ?? 1);
    const expected = (opts.expected ?? RECORDS) * (opts.perOrg ?? 1);
    // BENCH_CPU_PROF=<dir>: write a V8 CPU profile of the worker (the profile-driven pass, issue 7).
    const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF, '--cpu-prof-name', `${name}.cpuprofile`] : [];
    const p = spawnNode([...prof, CLI, 'worker'], {
      ...common, ...kafkaEnv, KAFKA_TOPIC: opts.topicName ?? topic, KAFKA_GROUP_ID: `g-${name}-${Date.now()}`, METRICS_PORT: '0', HOST: '127.0.0.1',
      LOG_LEVEL: process.env.BENCH_WORKER_LOG_LEVEL ?? 'info', HEARTBEAT_INTERVAL_MS: '0', ...env,
    });
    // The clock starts when the worker has joined its group: start-up (migrations, module loading) is not the pipeline.
    await p.waitLine((l) => l.event === 'kafka.joined');
    const pid = p.child.pid!;
    const start = { at: Date.now(), cpu: procFigures(pid).cpuSeconds };
    if (opts.feed) await opts.feed();
    const progress = setInterval(() => log(`  ${name}: ${receiver.count(prefix)} of ${expected} records`), 5000);
    await until(() => receiver.count(prefix) >= expected, `${name}: ${expected} records`, Number(process.env.BENCH_RUN_TIMEOUT_MS ?? 600_000)).catch((e) => {
      if (process.env.BENCH_VERBOSE) {
        const got = new Set(receiver.take(prefix).flatMap((a) => decodeArrival(a).map((r) => r.id)));
        const missing = [...syntheticRecords(RECORDS, { orgs: ORGS, idPrefix: 'e2e', seed: 2026 })].filter((r) => !got.has(r.id));
        log(`missing ${missing.length}: ${JSON.stringify(missing.slice(0, 3).map((r) => [r.id, r.orgId, r.severity, r.source]))} ... ${JSON.stringify(missing.slice(-2).map((r) => r.id))}`);
      }
      throw e;
    }).finally(() => clearInterval(progress));
    const end = procFigures(pid);
    const endAt = Date.now();
    const bytesOnWire = receiver.bytes(prefix);
    const arrivals = receiver.take(prefix);
    p.child.kill('SIGTERM');
    await p.exited;
    await deleteDrains(drains);
    const f = figures(name, expected, (endAt - start.at) / 1000, end.cpuSeconds - start.cpu, end.peakRssBytes, bytesOnWire, arrivals.length);
    runs.push(f);
    return { f, arrivals };
  }

  const want = (name: string) => ONLY === undefined || ONLY.includes(name);
  const baseline = want('baseline') ? await runRunner('baseline', 'baseline.ts', {}) : undefined;
  const peer = want('peer') ? await runRunner('peer', 'otel-peer.ts', { PEER_GZIP: '1', PEER_SCRUB: '1' }) : undefined;
  const peerDefault = want('peer-default') ? await runRunner('peer-default', 'otel-peer.ts', { PEER_GZIP: '0', PEER_SCRUB: '0' }) : undefined;
  let engine: RunFigures | undefined;
  if (want('logdrain')) {
    const run1 = await runLogdrain('logdrain', 'ndjson');
    engine = run1.f;
    // Every record arrived once per drain, at its own organization's drain.
    const ids = new Set<string>();
    for (const a of run1.arrivals) for (const r of decodeArrival(a)) {
      if (!a.path.includes(`/${r.orgId}/`)) throw new Error(`record ${r.id} of ${r.orgId} arrived at ${a.path}`);
      ids.add(r.id);
    }
    if (ids.size !== RECORDS) throw new Error(`logdrain delivered ${ids.size} distinct records of ${RECORDS}`);
  }
  const engineOtlp = want('logdrain-otlp') ? (await runLogdrain('logdrain-otlp', 'otlp')).f : undefined;

  if (want('logdrain-latency')) {
    // Latency: a live stream at RATE records a second, BATCH_LINGER_MS=100, Kafka append to 2xx.
    const liveCount = RATE * LATENCY_SECONDS;
    const live = await runLogdrain('logdrain-latency', 'ndjson', { BATCH_LINGER_MS: '100' }, {
      topicName: liveTopic, expected: liveCount,
      async feed() {
        const gen = syntheticRecords(liveCount, { orgs: ORGS, idPrefix: 'live', seed: 7 });
        const perTick = RATE / 100;
        const t0 = Date.now();
        for (let tick = 0; tick < LATENCY_SECONDS * 100; tick++) {
          const msgs = [];
          for (let i = 0; i < perTick; i++) {
            const r = gen.next().value!;
            r.timestamp = new Date().toISOString();
            msgs.push({ key: r.orgId, partition: (tick * perTick + i) % PARTITIONS, value: JSON.stringify(r) });
          }
          await producer.send({ topic: liveTopic, acks: 1, messages: msgs });
          const wait = t0 + (tick + 1) * 10 - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      },
    });
    const lat = live.arrivals.flatMap((a) => decodeArrival(a).map((r) => a.at - Date.parse(r.timestamp))).sort((a, b) => a - b);
    const pct = (q: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * q))]!;
    results.latency = { ratePerSecond: RATE, seconds: LATENCY_SECONDS, lingerMs: 100, p50Ms: pct(0.5), p99Ms: pct(0.99), maxMs: lat.at(-1), peakRssMB: live.f.peakRssMB };
    log(`latency at ${RATE}/s with BATCH_LINGER_MS=100: p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`);
  }

  results.runs = runs;
  const ratio = (a: RunFigures | undefined, b: RunFigures | undefined) => (a && b ? a.recordsPerCpuSecond / b.recordsPerCpuSecond : null);
  results.ratios = {
    engineToBaseline: ratio(engine, baseline),
    engineToPeer: ratio(engine, peer),
    engineOtlpToPeer: ratio(engineOtlp, peer),
    peerDefaultToPeer: ratio(peerDefault, peer),
  };

  console.table(runs.map((r) => ({
    run: r.name, records: r.records, 'rec/s': Math.round(r.recordsPerSecond), 'rec/CPU-s': Math.round(r.recordsPerCpuSecond),
    'peak RSS MB': Math.round(r.peakRssMB), 'bytes/rec on wire': Math.round(r.bytesPerRecord), posts: r.posts,
  })));
  const out = {
    when: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, kernel: release() },
    command: 'npm run bench:e2e',
    ...results,
  };
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  if (ONLY === undefined) writeFileSync(new URL('../results/e2e.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
  else console.log(JSON.stringify(out, null, 2));
  const r = results.ratios as Record<string, number | null>;
  const fmt = (x: number | null | undefined) => (x == null ? 'n/a' : x.toFixed(2));
  if (results.latency) console.log(`latency: ${JSON.stringify(results.latency)}`);
  console.log(`ratio_to_baseline=${fmt(r.engineToBaseline)} ratio_to_peer=${fmt(r.engineToPeer)}`);
} finally {
  await producer.disconnect().catch(() => {});
  await api.stop().catch(() => {});
  await receiver.close().catch(() => {});
  await broker.stop().catch(() => {});
  await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
  await admin.end().catch(() => {});
}
