/**
 * The bounded soak (`npm run soak`, not part of `npm test`): SOAK_SECONDS (default 600) of steady
 * load through the librdkafka mock broker to two `logdrain worker` processes on real Postgres,
 * against a destination that flaps, with the workers restarted under load:
 *
 *   load         SOAK_RATE records a second (default 2,000), two organizations, one drain each
 *   destination  every FLAP_SECONDS (30) it moves along ok -> 500 -> ok -> hang (timeouts) -> ...
 *   restarts     every RESTART_SECONDS (60) one worker (alternating) is stopped and a fresh one
 *                started: SIGTERM, and every third restart SIGKILL
 *   samples      every SAMPLE_SECONDS (10): RSS of each live worker, parked records (the durable
 *                backlog table) and the consumer group's lag on the topic
 *
 * At the end the load stops, the destination stays up, and the harness waits (DRAIN_TIMEOUT_SECONDS,
 * default 600) until the lag and the parked backlog are zero and each drain's ledger
 * (test/helpers/ledger.ts) accounts for every produced record: received by the destination or
 * named by a dropped delivery record with its reason. A record neither received nor dropped when the
 * wait ends is `pending` while it is still parked in the backlog table (late, not lost) and `lost`
 * otherwise. Results go to bench/results/soak.json; the exit code is 1 when a record is lost, a
 * batch crossed organizations, or the backlog never drained.
 */
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import pg from 'pg';
import { startMockBroker } from '../../test/helpers/broker.js';
import { spawnLogdrain, type LogdrainProcess } from '../../test/helpers/processes.js';
import { describeLedger, ledgerOf, type LedgerReport } from '../../test/helpers/ledger.js';
import { syntheticRecords } from '../../src/devtools/synthetic.js';
import { loadConfig } from '../../src/config/config.js';
import { run } from '../../src/commands/run.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { startFlappingReceiver, type Mode } from './flapping-receiver.js';

const knob = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SOAK_SECONDS = knob('SOAK_SECONDS', 600);
const RATE = knob('SOAK_RATE', 2000);
const FLAP_SECONDS = knob('FLAP_SECONDS', 30);
const RESTART_SECONDS = knob('RESTART_SECONDS', 60);
const SAMPLE_SECONDS = knob('SAMPLE_SECONDS', 10);
const DRAIN_TIMEOUT_SECONDS = knob('DRAIN_TIMEOUT_SECONDS', 600);
/**
 * librdkafka's mock broker keeps at most 5 MB (or 100,000 messages) a partition and evicts older
 * message sets: a consumer behind the eviction point is reset past them. About 450 bytes a record,
 * the default keeps a 180 s run under it; a 600 s run evicts consumed data, which is harmless
 * unless a worker lags by minutes (the harness reports records never consumed separately).
 */
const PARTITIONS = knob('SOAK_PARTITIONS', 64);
const ADMIN_URL = process.env.SOAK_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RESULTS = new URL('../results/soak.json', import.meta.url).pathname;
const FLAP_CYCLE: Mode[] = ['ok', 'error', 'ok', 'hang'];
const ORGS = ['org_soak_a', 'org_soak_b'].map((orgId, o) => ({
  orgId,
  agents: [0, 1].map((a) => ({ id: `agt_soak_${o}_${a}`, name: `soak-bot-${o}-${a}`, version: '1' })),
}));

const log = (msg: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;

/** Resident memory of a live process, from /proc (0 once it is gone). */
function rssBytes(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

// --- the pieces: database, broker, destination, API (in this process), drains ------------------
const dbName = `logdrain_soak_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database ${dbName}`);
const dbUrl = new URL(ADMIN_URL);
dbUrl.pathname = `/${dbName}`;
const work = mkdtempSync(join(tmpdir(), 'logdrain-soak-'));
const pathOf = (orgId: string) => `/soak/${orgId}`;
const receiver = await startFlappingReceiver(join(work, 'cert'), (path) => ORGS.find((o) => path === pathOf(o.orgId))?.orgId);
const topic = 'soak-records';
const broker = await startMockBroker({ topics: [{ name: topic, partitions: PARTITIONS }] });
const seedFile = join(work, 'seed.json');
writeFileSync(seedFile, JSON.stringify({
  orgs: ORGS.map((o) => ({ id: o.orgId, name: o.orgId, plan: 'standard', archived: false })),
  users: [{ id: 'usr_soak', email: 'soak@soak.test', memberships: ORGS.map((o) => ({ orgId: o.orgId, role: 'admin' })) }],
  agents: ORGS.flatMap((o) => o.agents.map((a) => ({ id: a.id, orgId: o.orgId, name: a.name, visibility: 'org', version: '1' }))),
  apiKeys: [],
  sessions: [{ token: 'sess_soak', userId: 'usr_soak', revoked: false }],
}));
const common = { DATABASE_URL: dbUrl.toString(), NODE_EXTRA_CA_CERTS: receiver.caPath, DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost' };
const api = await run('serve', loadConfig({ ...common, PORT: '0', HOST: '127.0.0.1', SEED_FILE: seedFile, LOG_LEVEL: 'silent' }), silentLogger());
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${api.port}${path}`, {
    method, headers: { authorization: 'Bearer sess_soak', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
};
const drains: { orgId: string; id: string; path: string }[] = [];
for (const o of ORGS) {
  const d = await call('POST', `/admin/orgs/${o.orgId}/log-drains`, { name: 'soak', type: 'http', format: 'ndjson', endpoint: `${receiver.url}${pathOf(o.orgId)}`, minSeverity: 'debug' });
  await call('POST', `/admin/orgs/${o.orgId}/log-drains/${d.id}/verify`);
  drains.push({ orgId: o.orgId, id: d.id as string, path: pathOf(o.orgId) });
}
for (const d of drains) {
  for (let i = 0; (await call('GET', `/admin/orgs/${d.orgId}/log-drains/${d.id}`)).state !== 'healthy'; i++) {
    if (i > 200) throw new Error(`drain ${d.id} not verified`);
    await sleep(50);
  }
}

// --- workers, by generation ---------------------------------------------------------------------
const workerEnv = {
  ...common, KAFKA_BROKERS: broker.bootstrap, KAFKA_TOPIC: topic, KAFKA_GROUP_ID: 'soak-workers', KAFKA_SESSION_TIMEOUT_MS: '6000',
  KAFKA_HEARTBEAT_INTERVAL_MS: '500', BATCH_LINGER_MS: '200', BATCH_MAX_RECORDS: '500', DRAIN_REFRESH_MS: '1000', METRICS_PORT: '0',
  HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: '10000', DELIVERY_TIMEOUT_MS: '2000', RETRY_BASE_MS: '200', RETRY_MAX_MS: '2000',
  BACKLOG_POLL_MS: '500', HEARTBEAT_INTERVAL_MS: '0', LOG_LEVEL: 'info',
};
interface Generation {
  slot: number;
  generation: number;
  pid: number;
  startedAtS: number;
  endedAtS?: number;
  stoppedBy?: 'SIGTERM' | 'SIGKILL' | 'end';
  exit?: { code: number | null; signal: string | null };
  gracefulStopMs?: number;
  rssMB: { t: number; mb: number }[];
}
const started = Date.now();
const now = () => Math.round((Date.now() - started) / 100) / 10;
const generations: Generation[] = [];
/** Warning and error lines of every worker generation, counted by event. */
const workerWarnings: Record<string, number> = {};
const live: (LogdrainProcess | undefined)[] = [undefined, undefined];
const liveGen: (Generation | undefined)[] = [undefined, undefined];

async function startWorker(slot: number): Promise<void> {
  const p = spawnLogdrain(['worker'], workerEnv);
  // The helper keeps every log line; the soak only needs the latest few.
  const gen: Generation = { slot, generation: generations.filter((g) => g.slot === slot).length + 1, pid: p.child.pid ?? 0, startedAtS: now(), rssMB: [] };
  generations.push(gen);
  live[slot] = p;
  liveGen[slot] = gen;
  setInterval(() => {
    for (const l of p.lines.splice(0)) {
      if (typeof l.level === 'number' && l.level >= 40) {
        const key = `${String(l.event ?? l.msg)}`;
        workerWarnings[key] = (workerWarnings[key] ?? 0) + 1;
      }
    }
  }, 2000).unref();
  await p.waitForEvent('kafka.joined', 60_000);
}

async function restart(slot: number, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const p = live[slot]!;
  const gen = liveGen[slot]!;
  const t0 = Date.now();
  p.kill(signal);
  const exit = await Promise.race([p.exited, sleep(30_000).then(() => undefined)]);
  if (!exit) {
    log(`worker ${slot}.${gen.generation} did not stop within 30 s of ${signal}; killing it`);
    p.kill('SIGKILL');
  }
  const settled = exit ?? (await p.exited);
  Object.assign(gen, { endedAtS: now(), stoppedBy: signal, exit: { code: settled.code, signal: settled.signal } });
  if (signal === 'SIGTERM') gen.gracefulStopMs = Date.now() - t0;
  log(`worker ${slot}.${gen.generation} stopped by ${signal}: exit ${settled.code ?? settled.signal} after ${Date.now() - t0} ms`);
  await startWorker(slot);
}

// --- backlog: parked records and the group's lag --------------------------------------------------
const kafka = new Kafka({ clientId: 'soak', brokers: broker.brokers, logLevel: logLevel.NOTHING });
const kafkaAdmin = kafka.admin();
await kafkaAdmin.connect();
async function lag(): Promise<number> {
  const ends = await kafkaAdmin.fetchTopicOffsets(topic);
  const [committed] = await kafkaAdmin.fetchOffsets({ groupId: 'soak-workers', topics: [topic] });
  const at = new Map((committed?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  return ends.reduce((sum, e) => sum + Math.max(0, Number(e.high) - Math.max(0, at.get(e.partition) ?? 0)), 0);
}
const parked = async () => (await api.store.sql.query<{ n: number }>('select count(*)::int as n from drain_backlog'))[0]?.n ?? 0;
const backlogSeries: { t: number; parked: number; lag: number; mode: Mode; produced: number }[] = [];

// --- the run ------------------------------------------------------------------------------------
await startWorker(0);
await startWorker(1);
log(`two workers joined; ${SOAK_SECONDS} s at ${RATE} records/s, flapping every ${FLAP_SECONDS} s, a restart every ${RESTART_SECONDS} s`);

const producer: Producer = kafka.producer();
await producer.connect();
const produced = new Map<string, string[]>(ORGS.map((o) => [o.orgId, []]));
const source = syntheticRecords(Number.MAX_SAFE_INTEGER, { orgs: ORGS, idPrefix: `soak${Date.now().toString(36)}` });
let producedCount = 0;
let mode: Mode = 'ok';
let restarts = 0;
const timeline: { t: number; what: string }[] = [];
const loadStart = Date.now();
const loadEnd = loadStart + SOAK_SECONDS * 1000;
let nextFlap = loadStart + FLAP_SECONDS * 1000;
let nextRestart = loadStart + RESTART_SECONDS * 1000;
let nextSample = loadStart;
let restarting: Promise<void> | undefined;

while (Date.now() < loadEnd) {
  // Steady load: catch up to where the rate says we should be, in chunks of at most 500.
  const due = Math.floor(((Date.now() - loadStart) / 1000) * RATE) - producedCount;
  if (due > 0) {
    const chunk = Array.from({ length: Math.min(due, 500) }, () => source.next().value!);
    // Keyed by record id, so the load spreads over every partition (four agent keys would fill four
    // partitions past the mock broker's 5 MB and let it evict records before they are consumed).
    await producer.send({ topic, messages: chunk.map((r) => ({ key: r.id, value: JSON.stringify(r) })) });
    for (const r of chunk) produced.get(r.orgId)!.push(r.id);
    producedCount += chunk.length;
  }
  if (Date.now() >= nextFlap) {
    // The cycle holds ok twice: walk it by position (elapsed periods), not by value.
    mode = FLAP_CYCLE[Math.floor((Date.now() - loadStart) / (FLAP_SECONDS * 1000)) % FLAP_CYCLE.length]!;
    receiver.setMode(mode);
    timeline.push({ t: now(), what: `destination ${mode}` });
    nextFlap += FLAP_SECONDS * 1000;
  }
  if (Date.now() >= nextRestart && !restarting) {
    restarts++;
    const slot = restarts % 2;
    const signal = restarts % 3 === 0 ? 'SIGKILL' : 'SIGTERM';
    timeline.push({ t: now(), what: `worker ${slot} ${signal}` });
    restarting = restart(slot, signal).finally(() => (restarting = undefined));
    nextRestart += RESTART_SECONDS * 1000;
  }
  if (Date.now() >= nextSample) {
    for (const g of liveGen) if (g) g.rssMB.push({ t: now(), mb: mb(rssBytes(g.pid)) });
    const sample = { t: now(), parked: await parked(), lag: await lag(), mode, produced: producedCount };
    backlogSeries.push(sample);
    log(`t=${sample.t}s produced ${producedCount}, lag ${sample.lag}, parked ${sample.parked}, destination ${mode}, rss ${liveGen.map((g) => g?.rssMB.at(-1)?.mb).join('/')} MB`);
    nextSample += SAMPLE_SECONDS * 1000;
  }
  await sleep(20);
}
await restarting;
receiver.setMode('ok');
timeline.push({ t: now(), what: 'load stopped, destination ok' });
log(`load stopped after ${producedCount} records; waiting for the backlog to drain`);

// --- drain: lag 0, parked 0, every record accounted -------------------------------------------------
const drainStart = Date.now();
let reports: LedgerReport[] = [];
/** Each drain's ledger: every produced record received or named by a dropped delivery record. */
async function ledgers(): Promise<LedgerReport[]> {
  const out: LedgerReport[] = [];
  for (const d of drains) {
    out.push(await ledgerOf({ drainId: d.id, produced: produced.get(d.orgId)!, received: receiver.received(d.path), sql: api.store.sql, label: d.orgId }));
  }
  return out;
}
let drained = false;
let settledSamples = 0;
let lastMissing = -1;
while (Date.now() - drainStart < DRAIN_TIMEOUT_SECONDS * 1000) {
  for (const g of liveGen) if (g) g.rssMB.push({ t: now(), mb: mb(rssBytes(g.pid)) });
  const sample = { t: now(), parked: await parked(), lag: await lag(), mode: 'ok' as Mode, produced: producedCount };
  backlogSeries.push(sample);
  reports = await ledgers();
  const missing = reports.reduce((n, r) => n + r.missing.length, 0);
  log(`draining: lag ${sample.lag}, parked ${sample.parked}, missing ${missing}`);
  if (sample.lag === 0 && sample.parked === 0 && missing === 0) {
    drained = true;
    break;
  }
  // Nothing left to consume or re-deliver and nothing moving: what is still missing stays missing.
  settledSamples = sample.lag === 0 && sample.parked === 0 && missing === lastMissing ? settledSamples + 1 : 0;
  lastMissing = missing;
  if (settledSamples >= 3) break;
  await sleep(SAMPLE_SECONDS * 1000);
}
const drainSeconds = (Date.now() - drainStart) / 1000;

// --- stop, figures ----------------------------------------------------------------------------------
for (const [slot, p] of live.entries()) {
  const gen = liveGen[slot]!;
  gen.rssMB.push({ t: now(), mb: mb(rssBytes(gen.pid)) });
  p?.kill('SIGTERM');
  const exit = await p!.exited;
  Object.assign(gen, { endedAtS: now(), stoppedBy: 'end', exit: { code: exit.code, signal: exit.signal } });
}
await producer.disconnect();
await kafkaAdmin.disconnect();

const rssSummary = generations.map((g) => {
  const values = g.rssMB.map((s) => s.mb).filter((v) => v > 0);
  return {
    slot: g.slot, generation: g.generation, pid: g.pid, startedAtS: g.startedAtS, endedAtS: g.endedAtS, stoppedBy: g.stoppedBy, exit: g.exit,
    gracefulStopMs: g.gracefulStopMs, samples: values.length, firstMB: values[0] ?? null, lastMB: values.at(-1) ?? null, maxMB: values.length ? Math.max(...values) : null,
  };
});
// Drained: no lag, nothing parked, every produced record received or dropped with a reason.
drained = drained && backlogSeries.at(-1)?.parked === 0;
// Flat memory: the generations running at the end (which lived through the last flaps and the drain)
// settle no higher than the first generations peaked, give or take 25%. Their own peak is reported
// too: a worker holding a hang's worth of in-flight records peaks for a while and comes back.
const firstPeak = Math.max(...rssSummary.filter((g) => g.generation === 1).map((g) => g.maxMB ?? 0));
const finalGenerations = rssSummary.filter((g) => g.stoppedBy === 'end');
const lastPeak = Math.max(...finalGenerations.map((g) => g.maxMB ?? 0));
const lastSettled = Math.max(...finalGenerations.map((g) => g.lastMB ?? 0));
// Missing ids still parked are late, not lost: they would be delivered had the wait been longer.
// The others are told apart by the platform copy, which workers write for every record they consume:
// consumed but unaccounted is logdrain's loss; never consumed points at the source (broker eviction).
// The verdict reads the backlog and the ledgers again now that every worker has stopped: the last
// ledger of the wait is seconds older than this backlog, and the pump went on delivering parked
// records (and removing their rows) until the workers stopped, so comparing the two would call
// every record delivered in between "consumed but unaccounted" (the 638 of one 600 s run).
const stillParked = new Set(
  (await api.store.sql.query<{ record_id: string }>('select record_id from drain_backlog')).map((r) => r.record_id),
);
const lastWaitMissing = new Set(reports.flatMap((r) => r.missing));
reports = await ledgers();
/** Missing at the last ledger of the wait, received or dropped by the time the workers had stopped. */
const finalMissing = new Set(reports.flatMap((r) => r.missing));
const accountedAfterLastLedger = [...lastWaitMissing].filter((id) => !finalMissing.has(id)).length;
const consumed = new Set(
  (await api.store.sql.query<{ id: string }>('select id from agent_logs where org_id = any($1::text[])', [ORGS.map((o) => o.orgId)])).map((r) => r.id),
);
const missingAll = reports.flatMap((r) => r.missing);
const pending = missingAll.filter((id) => stillParked.has(id)).length;
const consumedUnaccounted = missingAll.filter((id) => !stillParked.has(id) && consumed.has(id));
const neverConsumed = missingAll.filter((id) => !stillParked.has(id) && !consumed.has(id));
// While the group still lags, an unaccounted record may simply not be consumed yet: no verdict then.
const finalLag = backlogSeries.at(-1)?.lag ?? 0;
const lost = finalLag === 0 ? reports.reduce((n, r) => n + r.missing.length, 0) - pending : null;
const duplicates = reports.reduce((n, r) => n + r.duplicates, 0);
const loadSamples = backlogSeries.filter((s) => s.t <= SOAK_SECONDS + (loadStart - started) / 1000);
const result = {
  when: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  knobs: { SOAK_SECONDS, SOAK_RATE: RATE, FLAP_SECONDS, RESTART_SECONDS, SAMPLE_SECONDS, PARTITIONS, workers: 2 },
  produced: producedCount,
  achievedRatePerSecond: Math.round(producedCount / SOAK_SECONDS),
  restarts: { total: restarts, sigterm: generations.filter((g) => g.stoppedBy === 'SIGTERM').length, sigkill: generations.filter((g) => g.stoppedBy === 'SIGKILL').length },
  gracefulStopsExitedZero: generations.filter((g) => g.stoppedBy === 'SIGTERM').every((g) => g.exit?.code === 0),
  destinationAnswers: receiver.answers,
  drained,
  drainSeconds,
  pending,
  lost,
  lostBreakdown: { accountedAfterLastLedger, consumedUnaccounted: consumedUnaccounted.length, consumedUnaccountedFirst: consumedUnaccounted.slice(0, 10), neverConsumed: neverConsumed.length, neverConsumedFirst: neverConsumed.slice(0, 10) },
  platformCopyRecords: consumed.size,
  workerWarnings,
  duplicates,
  ledgers: reports.map((r) => ({ ...r, missing: r.missing.length, missingFirst: r.missing.slice(0, 10), unexpected: r.unexpected.length })),
  tenancyViolations: receiver.tenancyViolations.length,
  backlog: { maxParked: Math.max(...loadSamples.map((s) => s.parked)), maxLag: Math.max(...loadSamples.map((s) => s.lag)), atEnd: backlogSeries.at(-1) },
  memory: { firstGenerationPeakMB: firstPeak, finalGenerationPeakMB: lastPeak, finalGenerationLastMB: lastSettled, flat: lastSettled <= firstPeak * 1.25 },
  rss: rssSummary,
  rssSeries: generations.map((g) => ({ slot: g.slot, generation: g.generation, samples: g.rssMB })),
  backlogSeries,
  timeline,
};
mkdirSync(new URL('../results', import.meta.url).pathname, { recursive: true });
writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);

for (const r of reports) log(describeLedger(r));
log(`produced ${producedCount} in ${SOAK_SECONDS} s (${result.achievedRatePerSecond}/s); restarts ${restarts} (${result.restarts.sigkill} SIGKILL); destination answers ${JSON.stringify(receiver.answers)}`);
log(`backlog during load: max lag ${result.backlog.maxLag}, max parked ${result.backlog.maxParked}; drained ${drained} in ${drainSeconds.toFixed(0)} s`);
log(`RSS: first generations' peak ${firstPeak} MB; final generations' peak ${lastPeak} MB, last ${lastSettled} MB (flat: ${result.memory.flat}); pending ${pending}, lost ${lost}, duplicates ${duplicates}, tenancy violations ${result.tenancyViolations}`);
log(`unaccounted: ${consumedUnaccounted.length} consumed (platform copy) but neither delivered, dropped nor parked; ${neverConsumed.length} never consumed; worker warnings ${JSON.stringify(workerWarnings)}`);
log(`results: ${RESULTS}`);

await api.stop();
await receiver.close();
await broker.stop();
await admin.query(`drop database ${dbName} with (force)`);
await admin.end();
process.exit(lost === 0 && drained && result.tenancyViolations === 0 ? 0 : 1);
