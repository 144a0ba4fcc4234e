/**
 * The parts every end-to-end benchmark shares (run.ts, paused.ts): the librdkafka broker, the
 * self-signed HTTPS receiver on loopback, a fresh Postgres database with the benchmark's
 * organizations seeded through the REST layer, and the two ways of running a contender:
 * `runLogdrain` (`logdrain worker` processes measured from /proc, from joining the group to the
 * last 2xx) and `runRunner` (a reference script under runners/ that reports its own figures).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, readdirSync, writeFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { cpus, totalmem, tmpdir, release, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, CompressionTypes, type Producer } from 'kafkajs';
import pg from 'pg';
import { startMockBroker, type MockBroker } from '../../test/helpers/broker.js';
import { loadConfig } from '../../src/config/config.js';
import { run } from '../../src/commands/run.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import type { AgentRecord } from '../../src/model/record.js';
import type { SyntheticOptions } from '../../src/devtools/synthetic.js';
import { startBenchReceiver, type BenchReceiver, type Arrival } from './receiver.js';
import { startProbeWorker } from '../../test/helpers/probe-worker.js';
import { createTransport } from '../../src/deliver/transport.js';
import { CLK_TCK, postgresCpu, postgresCpuBetween, statCpuSeconds, statFields, threadCpuSeconds, threadCpuSpent } from './proc-stat.js';

/**
 * The librdkafka mock broker keeps about 5 MB per partition and silently drops older message sets
 * beyond that, so data sets are spread over enough partitions (round-robin) to stay under it.
 */
export const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 24);
export const ORGS = Array.from({ length: 4 }, (_, o) => ({
  orgId: `org_b${o}`,
  agents: Array.from({ length: 2 }, (_, a) => ({ id: `agt_b${o}_${a}`, name: `bench-bot-${o}-${a}`, version: '1' })),
}));
/** The same organizations with `perOrg` agents each (the 10,000-agent data set is 2,500 each). */
export const manyAgentOrgs = (perOrg: number) => ORGS.map((o, oi) => ({
  orgId: o.orgId,
  agents: Array.from({ length: perOrg }, (_, a) => ({ id: `agt_m${oi}_${a}`, name: `many-bot-${oi}-${a}`, version: '1' })),
}));
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/**
 * BENCH_CLI=<path to cli.js>: the build to run (default dist/). In a tree others rebuild while a
 * run goes on, a snapshot (`tsc -p tsconfig.json --outDir build/bench-dist`) keeps every run on
 * the same code.
 */
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const RUNNERS = fileURLToPath(new URL('./runners', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Moves the main thread's profile (thread id 0 in Node's default name) out of `dir` to `to`; drops the rest. */
function keepMainThreadProfile(dir: string, to: string): void {
  const main = readdirSync(dir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (main) renameSync(join(dir, main), to);
  else log(`  no main-thread profile in ${dir}`);
  rmSync(dir, { recursive: true, force: true });
}

export const log = (msg: string) => process.stderr.write(`[bench:e2e] ${msg}\n`);

/** The machine, and its 1-minute load average when asked (others' work shares these cores). */
export function machine() {
  return { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, kernel: release(), loadAverage1m: loadavg()[0], allocatorEnv: ALLOCATOR_ENV };
}

/**
 * CPU seconds (user + system, all threads), the kernel's share of them, the main thread's alone
 * (the event loop: the rest is the thread pool running zlib and V8's collector and compiler
 * threads), minor page faults, current and peak RSS of a live process, from /proc.
 */
export function procFigures(pid: number): ProcFigures {
  const fields = statFields(`/proc/${pid}/stat`);
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  const mainThreadCpuSeconds = statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return {
    cpuSeconds, systemCpuSeconds: Number(fields[12]) / CLK_TCK, mainThreadCpuSeconds, minorFaults: Number(fields[7]),
    rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM'), threadCpuSeconds: threadCpuSeconds(pid),
  };
}

export interface ProcFigures {
  cpuSeconds: number;
  systemCpuSeconds: number;
  mainThreadCpuSeconds: number;
  minorFaults: number;
  rssBytes: number;
  peakRssBytes: number;
  threadCpuSeconds: Map<number, number>;
}

export interface RunFigures {
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
  /** The share of `cpuSeconds` on the main thread, from /proc (the rest: zlib's thread pool, V8's collector and compiler threads). */
  mainThreadShare?: number;
  /** The share of `cpuSeconds` spent in the kernel (system time): sockets, and page faults on freshly mapped memory. */
  systemShare?: number;
  /** Minor page faults a record: each a first touch of a freshly mapped 4 KB page (glibc returns large blocks to the system when freed). */
  minorFaultsPerRecord?: number;
  /** CPU of every Postgres process during a logdrain run (accounting, the platform copy, the backlog): not in `cpuSeconds`. */
  postgresCpuSeconds?: number;
}

/** The postmaster of the server `admin` is connected to, when it runs on this machine. */
async function postmasterOf(admin: pg.Client): Promise<number | undefined> {
  const { rows } = await admin.query<{ pid: number }>('select pg_backend_pid() as pid');
  try {
    return Number(statFields(`/proc/${rows[0]!.pid}/stat`)[1]);
  } catch {
    return undefined;
  }
}

export function figures(name: string, records: number, seconds: number, cpuSeconds: number, peakRssBytes: number, bytesOnWire: number, posts: number): RunFigures {
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

export interface Spawned {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  waitLine: (pred: (l: Record<string, unknown>) => boolean, ms?: number) => Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

/**
 * The image's memory settings (the Dockerfile's `ENV MALLOC_*`, glibc's allocator, and `ENV
 * NODE_OPTIONS`, V8's young generation), given to every process the harness starts, contenders and
 * references alike, so memory is measured as deployed. BENCH_ALLOCATOR=default runs them with
 * glibc's and V8's defaults instead.
 */
export const ALLOCATOR_ENV: Record<string, string> = process.env.BENCH_ALLOCATOR === 'default' ? {} : imageMemoryEnv();

function imageMemoryEnv(): Record<string, string> {
  // BENCH_DOCKERFILE: another Dockerfile's settings (allocator experiments).
  const dockerfile = readFileSync(process.env.BENCH_DOCKERFILE ?? join(ROOT, 'Dockerfile'), 'utf8');
  const env: Record<string, string> = {};
  for (const line of dockerfile.split('\n')) {
    if (!line.startsWith('ENV ')) continue;
    // NAME=value or NAME="value with spaces"
    for (const m of line.matchAll(/\b(MALLOC_[A-Z_]+|NODE_OPTIONS)=("[^"]*"|\S+)/g)) env[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  return env;
}

export function spawnNode(args: string[], env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...ALLOCATOR_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const lines: Record<string, unknown>[] = [];
  const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  // BENCH_STDOUT_DIR=<dir>: every line a process writes to stdout, JSON or not, also kept in <dir>/<pid>.log
  // (for V8 tracing flags such as --trace-deopt, whose lines the harness otherwise drops).
  const tee = process.env.BENCH_STDOUT_DIR ? join(process.env.BENCH_STDOUT_DIR, `${child.pid}.log`) : undefined;
  createInterface({ input: child.stdout! }).on('line', (text) => {
    if (tee) appendFileSync(tee, `${text}\n`);
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
    if (process.env.BENCH_VERBOSE || (process.env.BENCH_THREADS && text.includes('] threads ('))) process.stderr.write(`  | ${text}\n`);
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

export async function until(cond: () => boolean, what: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** BENCH_WORKER_ENV=NAME=value,NAME=value: settings for every `logdrain worker` of the run (for experiments). */
const workerEnv = Object.fromEntries((process.env.BENCH_WORKER_ENV ?? '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
/** BENCH_WORKER_NODE_ARGS="--flag --flag": Node options for every `logdrain worker` of the run (V8 flags Node refuses in NODE_OPTIONS). */
const workerNodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);

export type DrainKind = 'ndjson' | 'otlp';
export interface DrainRef {
  orgId: string;
  id: string;
}

export interface LogdrainOptions {
  topicName?: string;
  /** Produces the records once the workers have joined (a live stream); else the topic is full already. */
  feed?: () => Promise<void>;
  /** Records consumed (default: the harness's record count). */
  expected?: number;
  /** Drains per organization, each taking every record (default 1). */
  perOrg?: number;
  /** `logdrain worker` processes in the group (default 1). */
  workers?: number;
  /**
   * Start the clock only once the group has settled (every worker's latest assignment non-empty,
   * all partitions assigned): a second member's join rebalances the first, and a run measured
   * from the first join would mostly measure that rebalance. Use with `feed` on an empty topic.
   */
  settle?: boolean;
  /** Called with the drains once they are verified, before the workers start. */
  withDrains?: (drains: DrainRef[]) => Promise<void>;
  /**
   * Once `feed` has finished, wait at most this long for the expected records; then the run ends
   * with what arrived (its `records` is the count received) instead of failing.
   */
  settleAfterFeedMs?: number;
  /** Called while the run goes on, every `sampleMs`, with the workers' pids. */
  sample?: { everyMs: number; fn: (pids: number[]) => void };
}

export interface Harness {
  receiver: BenchReceiver;
  broker: MockBroker;
  producer: Producer;
  kafka: Kafka;
  call: (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;
  /** One statement on the run's database (the platform copy a replay scenario prepares). */
  query: (text: string) => Promise<Record<string, unknown>[]>;
  /** Produces `records` to `topic` in sets of 250 round-robin over its partitions and checks the topic holds them. */
  produce: (topic: string, records: Iterable<AgentRecord>) => Promise<void>;
  /**
   * A live stream: `rate` records a second for `seconds` (in ticks of 10 ms) of
   * syntheticRecords(data.count, data.options), each stamped with the time it is sent, so arrival
   * minus timestamp is Kafka append to 2xx. Produced by a child process (runners/feed.ts): the
   * receiver shares this process's event loop.
   */
  feedLive: (topic: string, rate: number, seconds: number, data: { count: number; options: SyntheticOptions }) => Promise<void>;
  runRunner: (name: string, script: string, env: Record<string, string>) => Promise<RunFigures>;
  runLogdrain: (name: string, kind: DrainKind, env?: Record<string, string>, opts?: LogdrainOptions) => Promise<{ f: RunFigures; arrivals: Arrival[] }>;
  close: () => Promise<void>;
}

/** A topic and its partitions (PARTITIONS unless given: a larger data set needs more, see above). */
export type TopicSpec = string | { name: string; partitions: number };

export async function startHarness(opts: { records: number; topics: TopicSpec[] }): Promise<Harness> {
  const partitionsOf = new Map(opts.topics.map((t) => (typeof t === 'string' ? [t, PARTITIONS] : [t.name, t.partitions])));
  const topicNames = [...partitionsOf.keys()];
  const dbName = `logdrain_e2e_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const postmaster = await postmasterOf(admin);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const work = mkdtempSync(join(tmpdir(), 'logdrain-e2e-'));
  const receiver = await startBenchReceiver(join(work, 'cert'));
  const broker = await startMockBroker({ topics: [...partitionsOf].map(([name, partitions]) => ({ name, partitions })) });
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

  /** `perOrg` drains per organization of the given kind, verified. */
  async function createDrains(kind: DrainKind, prefix: string, perOrg: number): Promise<DrainRef[]> {
    const out: DrainRef[] = [];
    for (const o of ORGS) {
      for (let i = 0; i < perOrg; i++) {
        const body = kind === 'otlp'
          ? { name: `${prefix}-${i}`, type: 'otlp', endpoint: `${receiver.url}${prefix}/${o.orgId}/${i}/v1/logs`, minSeverity: 'debug' }
          : { name: `${prefix}-${i}`, type: 'http', format: 'ndjson', endpoint: `${receiver.url}${prefix}/${o.orgId}/${i}`, minSeverity: 'debug' };
        const d = await call('POST', `/admin/orgs/${o.orgId}/log-drains`, body);
        out.push({ orgId: o.orgId, id: d.id as string });
      }
    }
    // The API only enqueues a verification; a worker's probe runner sends it. The measured workers
    // start later, so a probe runner stands in for them while the drains are verified.
    const transport = createTransport({ allowHosts: ['localhost'], extraCaCerts: readFileSync(receiver.caPath, 'utf8'), timeoutMs: 10_000 });
    const prober = await startProbeWorker({ config: loadConfig({ ...common, PROBE_POLL_MS: '50' }), store: api.store, transport, owner: 'bench-prober' });
    try {
      for (const d of out) await call('POST', `/admin/orgs/${d.orgId}/log-drains/${d.id}/verify`);
      for (const d of out) {
        for (let i = 0; ; i++) {
          const got = await call('GET', `/admin/orgs/${d.orgId}/log-drains/${d.id}`);
          if (got.state === 'healthy') break;
          if (i > 200) throw new Error(`drain ${d.id} not verified`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      await prober.stop();
      await transport.close();
    }
    return out;
  }
  async function deleteDrains(drains: DrainRef[]): Promise<void> {
    for (const d of drains) await call('DELETE', `/admin/orgs/${d.orgId}/log-drains/${d.id}`);
  }

  const kafka = new Kafka({ clientId: 'bench-producer', brokers: broker.brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const kafkaEnv = { KAFKA_BROKERS: broker.bootstrap };

  return {
    receiver, broker, producer, kafka, call,

    async query(text) {
      const db = new pg.Client({ connectionString: dbUrl.toString() });
      await db.connect();
      try {
        return (await db.query(text)).rows as Record<string, unknown>[];
      } finally {
        await db.end();
      }
    },

    async produce(topic, records) {
      // 250 records a message set, the sets round-robin over the partitions: the mock broker answers
      // a fetch with one message set per partition, so sets of a few records (one send spread over
      // all partitions) would make every consumer crawl at a few thousand records a second.
      // Eight sends at a time (each to its own partition): a live feed must outrun the consumers.
      // Records are drawn as they are sent: a data set of a million is never all in memory.
      const partitions = partitionsOf.get(topic) ?? PARTITIONS;
      let produced = 0;
      let set = 0;
      const it = records[Symbol.iterator]();
      for (let done = false; !done;) {
        const sends: Promise<unknown>[] = [];
        for (let k = 0; k < 8 && !done; k++) {
          const messages: { key: string; partition: number; value: string }[] = [];
          for (let r = it.next(); ; r = it.next()) {
            if (r.done) {
              done = true;
              break;
            }
            messages.push({ key: r.value.orgId, partition: set % partitions, value: JSON.stringify(r.value) });
            if (messages.length === 250) break;
          }
          if (messages.length === 0) break;
          produced += messages.length;
          set++;
          sends.push(producer.send({ topic, compression: CompressionTypes.None, messages }));
        }
        await Promise.all(sends);
      }
      const kadmin = kafka.admin();
      await kadmin.connect();
      const offsets = await kadmin.fetchTopicOffsets(topic);
      await kadmin.disconnect();
      const stored = offsets.reduce((n, o) => n + Number(o.high), 0);
      if (stored !== produced) throw new Error(`topic ${topic} holds ${stored} records, not ${produced}`);
      // The mock broker drops a partition's oldest message sets past about 5 MB, and the high
      // watermarks do not show it: the low ones do. Every contender would wait for records gone.
      const dropped = offsets.reduce((n, o) => n + Number(o.low), 0);
      if (dropped > 0) throw new Error(`the mock broker dropped ${dropped} of the ${produced} records of topic ${topic} (it keeps about 5 MB a partition): use fewer records or more partitions`);
      log(`topic ${topic} holds ${stored} records in ${offsets.filter((o) => o.high !== '0').length} partitions`);
    },

    async feedLive(topic, rate, seconds, data) {
      const p = spawnNode(['--import', 'tsx', join(RUNNERS, 'feed.ts')], {
        ...kafkaEnv, KAFKA_TOPIC: topic, FEED_RATE: String(rate), FEED_SECONDS: String(seconds), FEED_PARTITIONS: String(partitionsOf.get(topic) ?? PARTITIONS),
        FEED_COUNT: String(data.count), FEED_DATA: JSON.stringify(data.options), ...(process.env.FEED_SPREAD ? { FEED_SPREAD: process.env.FEED_SPREAD } : {}),
      });
      const report = await p.waitLine((l) => typeof l.fed === 'number', seconds * 1000 + 120_000);
      await p.exited;
      if (Number(report.stalledTicks) > 0 || Number(report.behindMs) > 1000) log(`  feed of ${topic}: ${report.stalledTicks} ticks waited on the producer; finished ${report.behindMs} ms late`);
    },

    async runRunner(name, script, env) {
      log(`run ${name}`);
      const prefix = `/${name}`;
      // A runner starts under tsx, whose module hooks run on a thread of their own: with one file
      // name for the process, the hooks thread's profile overwrote the main thread's. Each thread's
      // goes to a directory of the run's (Node names them CPU.<date>.<time>.<pid>.<tid>.<seq>), and
      // the main thread's (tid 0) is kept as the run's.
      const profDir = process.env.BENCH_CPU_PROF ? join(process.env.BENCH_CPU_PROF, `${name}.threads`) : undefined;
      const prof = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
      const p = spawnNode([...prof, '--import', 'tsx', join(RUNNERS, script)], {
        ...common, ...kafkaEnv, KAFKA_TOPIC: topicNames[0]!, KAFKA_GROUP_ID: `g-${name}-${Date.now()}`,
        TARGET_URL: `${receiver.url}${prefix}${script.includes('otel') ? '/v1/logs' : ''}`, EXPECTED_RECORDS: String(opts.records),
        ...(process.env.BENCH_THREADS ? { BENCH_THREADS: '1' } : {}), ...env,
      });
      const report = await p.waitLine((l) => typeof l.runner === 'string', 600_000);
      await p.exited;
      if (profDir) keepMainThreadProfile(profDir, join(process.env.BENCH_CPU_PROF!, `${name}.cpuprofile`));
      const bytesOnWire = receiver.bytes(prefix);
      receiver.take(prefix);
      const cpuSeconds = (Number(report.cpuUserMs) + Number(report.cpuSystemMs)) / 1000;
      const f = figures(name, Number(report.records), Number(report.wallMs) / 1000, cpuSeconds, Number(report.peakRssBytes), bytesOnWire, Number(report.posts));
      return {
        ...f, mainThreadShare: cpuSeconds > 0 ? Number(report.mainCpuMs) / 1000 / cpuSeconds : 0,
        systemShare: cpuSeconds > 0 ? Number(report.cpuSystemMs) / 1000 / cpuSeconds : 0, minorFaultsPerRecord: Number(report.minorFaults) / f.records,
      };
    },

    /**
     * `logdrain worker` as operators run it, measured from /proc: the clock starts when the first
     * worker has joined its group (start-up, migrations and module loading are not the pipeline),
     * each worker's CPU from its own join, and everything stops at the last expected 2xx.
     */
    async runLogdrain(name, kind, env = {}, o = {}) {
      log(`run ${name}`);
      // Every run reads the same records: each starts with no platform copy, so each stores them
      // as a first read does (a copy stored by an earlier run is a re-read, which costs less).
      const db = new pg.Client({ connectionString: dbUrl.toString() });
      await db.connect();
      await db.query('truncate agent_log_pages').finally(() => db.end());
      const prefix = `/${name}`;
      const perOrg = o.perOrg ?? 1;
      const drains = await createDrains(kind, prefix, perOrg);
      await o.withDrains?.(drains);
      const expected = (o.expected ?? opts.records) * perOrg;
      const groupId = `g-${name}-${Date.now()}`;
      const workers: { p: Spawned; start?: ProcFigures }[] = [];
      for (let w = 0; w < (o.workers ?? 1); w++) {
        // BENCH_CPU_PROF=<dir>: write a V8 CPU profile of the worker (docs/benchmarks-engine-findings.md, profile-driven findings).
        const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF, '--cpu-prof-name', `${name}${w ? `-${w}` : ''}.cpuprofile`] : [];
        const p = spawnNode([...prof, ...workerNodeArgs, CLI, 'worker'], {
          ...common, ...kafkaEnv, KAFKA_TOPIC: o.topicName ?? topicNames[0]!, KAFKA_GROUP_ID: groupId, METRICS_PORT: '0', HOST: '127.0.0.1',
          LOG_LEVEL: process.env.BENCH_WORKER_LOG_LEVEL ?? 'info', HEARTBEAT_INTERVAL_MS: '0', ...workerEnv, ...env,
        });
        workers.push({ p });
      }
      const joined = workers.map(async (w) => {
        await w.p.waitLine((l) => l.event === 'kafka.joined');
        w.start = procFigures(w.p.child.pid!);
      });
      await Promise.race(joined);
      let startAt = Date.now();
      await Promise.all(joined);
      if (o.settle) {
        const assigned = (w: { p: Spawned }) => (w.p.lines.filter((l) => l.event === 'kafka.joined').at(-1)?.partitions as unknown[] | undefined)?.length ?? 0;
        const all = partitionsOf.get(o.topicName ?? topicNames[0]!) ?? PARTITIONS;
        await until(() => workers.every((w) => assigned(w) > 0) && workers.reduce((n, w) => n + assigned(w), 0) === all, `${name}: a settled group`, 120_000);
        startAt = Date.now();
        for (const w of workers) w.start = procFigures(w.p.child.pid!);
      }
      const pids = workers.map((w) => w.p.child.pid!);
      const postgresAtStart = postgresCpu(postmaster);
      const progress = setInterval(() => log(`  ${name}: ${receiver.count(prefix)} of ${expected} records`), 5000);
      const sampler = o.sample ? setInterval(() => o.sample!.fn(pids), o.sample.everyMs) : undefined;
      try {
        if (o.feed) await o.feed();
        const done = () => receiver.count(prefix) >= expected;
        if (o.settleAfterFeedMs !== undefined) await until(done, name, o.settleAfterFeedMs).catch(() => log(`  ${name}: ${receiver.count(prefix)} of ${expected} records when the wait ended`));
        else await until(done, `${name}: ${expected} records`, Number(process.env.BENCH_RUN_TIMEOUT_MS ?? 900_000));
      } finally {
        clearInterval(progress);
        if (sampler) clearInterval(sampler);
      }
      const endAt = Date.now();
      const postgresAtEnd = postgresCpu(postmaster);
      const postgresSpent = postgresCpuBetween(postgresAtStart, postgresAtEnd);
      const ends = workers.map((w) => ({ end: procFigures(w.p.child.pid!), start: w.start! }));
      const bytesOnWire = receiver.bytes(prefix);
      const arrivals = receiver.take(prefix);
      for (const w of workers) w.p.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.p.exited));
      await deleteDrains(drains);
      const spent = (k: 'cpuSeconds' | 'systemCpuSeconds' | 'mainThreadCpuSeconds' | 'minorFaults') => ends.reduce((n, e) => n + e.end[k] - e.start[k], 0);
      const cpu = spent('cpuSeconds');
      const peak = Math.max(...ends.map((e) => e.end.peakRssBytes));
      const received = arrivals.reduce((n, a) => n + a.records, 0);
      const f = figures(name, Math.min(expected, received), (endAt - startAt) / 1000, cpu, peak, bytesOnWire, arrivals.length);
      const share = (s: number) => (cpu > 0 ? s / cpu : 0);
      // BENCH_THREADS=1: each worker thread's CPU over the run, by thread id (for experiments; the
      // main thread's id is the process's, V8's platform threads come next, zlib's pool later).
      if (process.env.BENCH_THREADS) {
        for (const [w, { start, end }] of ends.entries()) {
          log(`  ${name} threads (id - pid: CPU s): ${threadCpuSpent(workers[w]!.p.child.pid!, start.threadCpuSeconds, end.threadCpuSeconds)}`);
        }
      }
      return {
        f: { ...f, mainThreadShare: share(spent('mainThreadCpuSeconds')), systemShare: share(spent('systemCpuSeconds')), minorFaultsPerRecord: spent('minorFaults') / f.records, postgresCpuSeconds: postgresSpent },
        arrivals,
      };
    },

    async close() {
      await producer.disconnect().catch(() => {});
      await api.stop().catch(() => {});
      await receiver.close().catch(() => {});
      await broker.stop().catch(() => {});
      await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
      await admin.end().catch(() => {});
    },
  };
}
