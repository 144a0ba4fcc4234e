/**
 * Workflow runtime benchmark on real Postgres: `npm run bench:workflows`.
 *
 * Processes as operators run them: one `logdrain serve` API that runs no executor
 * (`WORKFLOW_EXECUTOR=false`) takes the starts, and one or two executor processes (`logdrain serve`
 * with the executor on and no traffic) run them; a fresh database on BENCH_POSTGRES_URL's server,
 * dropped at the end. The definition is a three-step graph (`noop`, `noop`, `output`).
 *
 * - **Throughput.** N runs are queued through the batch route while no executor runs; the executors
 *   then start, and steps a second are the steps done over the span from the first attempt's start
 *   to the last run's completion (database clock).
 * - **Baseline.** The same N runs queued the same way, then worked off by a bare claim-and-complete
 *   loop in this process on the same tables: claim the oldest queued run (the executor's claim
 *   statement), mark each step completed (one statement a step), complete the run; as many loops at
 *   once as an executor has slots. Measured before and after the executor scenarios; the mean of the
 *   two is the ratio's denominator (both are reported, to show drift on a shared machine).
 * - **Latency.** With the executors running, single starts (`POST /runs`) are sent at a fixed rate
 *   (open loop: each at its scheduled time, whether or not earlier ones answered) for a fixed time;
 *   start-to-completed is the run's `completedAt` minus the moment its request was sent.
 *
 * The first BENCH_WF_WARMUP_SECONDS of each fixed-rate phase warm the processes up (pools, JIT) and
 * are not counted.
 *
 * Environment: BENCH_WF_RUNS (2000), BENCH_WF_RATE (100), BENCH_WF_SECONDS (10),
 * BENCH_WF_WARMUP_SECONDS (2), BENCH_WF_SLOTS (8, WORKFLOW_EXECUTOR_SLOTS of each executor),
 * BENCH_POSTGRES_URL.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { createTestDatabase, type TestDatabase } from '../test/helpers/postgres.js';
import { spawnLogdrain, type LogdrainProcess } from '../test/helpers/processes.js';

const RUNS = Number(process.env.BENCH_WF_RUNS ?? 2000);
const RATE = Number(process.env.BENCH_WF_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_WF_SECONDS ?? 10);
const SLOTS = Number(process.env.BENCH_WF_SLOTS ?? 8);
/** The first seconds of each fixed-rate phase warm the processes (connection pools, JIT) and are not counted. */
const WARMUP_SECONDS = Number(process.env.BENCH_WF_WARMUP_SECONDS ?? 2);
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGET_STEPS_RATIO = 0.5;
const TARGET_P99_MS = 250;
const AGENT = 'agt_bench';
const KEY = 'lk_bench';
const WORKFLOW = 'three-steps';
const STEPS = 3;

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const loadavgStart = loadavg();

function writeSeed(): string {
  const seed = {
    orgs: [{ id: 'org_bench', name: 'Bench', plan: 'standard' }],
    users: [{ id: 'usr_bench', email: 'bench@bench.test', memberships: [{ orgId: 'org_bench', role: 'admin' }] }],
    agents: [{ id: AGENT, orgId: 'org_bench', name: 'bench-bot', visibility: 'org', version: '1' }],
    apiKeys: [{ key: KEY, ownerId: 'usr_bench', orgId: 'org_bench', scopes: ['workflows:*'], agentGrants: [], status: 'active' }],
    sessions: [],
    workflows: [{
      id: 'wf_three', agentId: AGENT, name: WORKFLOW, form: 'graph', activeVersionId: 'wfv_three_1',
      versions: [{ id: 'wfv_three_1', graph: { steps: [{ id: 'a', kind: 'noop' }, { id: 'b', kind: 'noop' }, { id: 'c', kind: 'output', value: { ok: true } }] } }],
    }],
    workflowPolicies: [{ orgId: 'org_bench', maxConcurrentRuns: 1_000_000 }],
  };
  const path = join(mkdtempSync(join(tmpdir(), 'bench-workflows-')), 'seed.json');
  writeFileSync(path, JSON.stringify(seed));
  return path;
}

interface Ctx { db: TestDatabase; pool: pg.Pool; api: LogdrainProcess; base: string; env: Record<string, string> }

async function post(ctx: Ctx, path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${ctx.base}/workflows/${AGENT}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

/** Queues `count` runs through the batch route (200 a request); returns their ids. */
async function queueRuns(ctx: Ctx, label: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < count; from += 200) {
    const items = Array.from({ length: Math.min(200, count - from) }, (_, i) => ({ idempotencyKey: `${label}-${from + i}` }));
    const res = await post(ctx, '/runs/batch', { workflowName: WORKFLOW, items });
    if (res.status !== 202) throw new Error(`batch start answered ${res.status}: ${JSON.stringify(res.body)}`);
    for (const item of res.body.items as { runId: string; status: string }[]) {
      if (item.status !== 'queued') throw new Error(`a batch item was ${item.status}`);
      ids.push(item.runId);
    }
  }
  return ids;
}

async function waitCompleted(ctx: Ctx, ids: string[], timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await ctx.pool.query<{ n: number }>("select count(*)::int as n from workflow_runs where id = any($1::text[]) and status = 'completed'", [ids]);
    if (rows[0]!.n === ids.length) return;
    if (Date.now() > end) throw new Error(`${rows[0]!.n} of ${ids.length} runs completed within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Steps a second over the span from the first step's start to the last completion (database clock). */
async function stepsPerSecond(ctx: Ctx, ids: string[]): Promise<{ stepsPerSecond: number; runsPerSecond: number; spanMs: number }> {
  const { rows } = await ctx.pool.query<{ first: Date; last: Date; steps: number }>(
    `select min(s.started_at) as first, max(r.completed_at) as last, count(*)::int as steps
       from workflow_runs r join workflow_run_steps s on s.run_id = r.id
      where r.id = any($1::text[]) and s.status = 'completed'`,
    [ids],
  );
  const { first, last, steps } = rows[0]!;
  const spanMs = last.getTime() - first.getTime();
  if (steps !== ids.length * STEPS) throw new Error(`${steps} steps completed, ${ids.length * STEPS} expected`);
  return { stepsPerSecond: (steps * 1000) / spanMs, runsPerSecond: (ids.length * 1000) / spanMs, spanMs };
}

/** The baseline: the executor's claim, then one statement a step and one to complete, `SLOTS` loops at once. */
async function bareLoop(ctx: Ctx, label: string): Promise<ReturnType<typeof stepsPerSecond> extends Promise<infer T> ? T : never> {
  const ids = await queueRuns(ctx, label, RUNS);
  const loop = async (owner: string) => {
    for (;;) {
      const { rows } = await ctx.pool.query<{ id: string; steps: number }>(
        `update workflow_runs set status = 'running', gate = null, lease_owner = $1, lease_until = now() + interval '30 seconds', updated_at = now()
          where id = (select id from workflow_runs where status = 'queued' order by created_at, id limit 1 for update skip locked)
          returning id, jsonb_array_length(graph->'steps') as steps`,
        [owner],
      );
      const run = rows[0];
      if (!run) return;
      for (let idx = 0; idx < run.steps; idx++) {
        await ctx.pool.query("update workflow_run_steps set status = 'completed', attempt = attempt + 1, started_at = now(), ended_at = now() where run_id = $1 and idx = $2", [run.id, idx]);
      }
      await ctx.pool.query("update workflow_runs set status = 'completed', completed_at = now(), lease_owner = null, lease_until = null where id = $1 and lease_owner = $2", [run.id, owner]);
    }
  };
  await Promise.all(Array.from({ length: SLOTS }, (_, i) => loop(`bare-${i}`)));
  await waitCompleted(ctx, ids, 10_000);
  return stepsPerSecond(ctx, ids);
}

/** BENCH_WF_PROFILE=<dir>: the API and each executor process write a CPU profile there when they stop. */
function profiling(): string[] {
  const dir = process.env.BENCH_WF_PROFILE;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

async function startExecutors(ctx: Ctx, n: number): Promise<LogdrainProcess[]> {
  const procs = Array.from({ length: n }, () => spawnLogdrain(['serve'], {
    ...ctx.env, WORKFLOW_EXECUTOR: 'true', WORKFLOW_EXECUTOR_SLOTS: String(SLOTS), LOG_LEVEL: 'info',
  }, profiling()));
  await Promise.all(procs.map((p) => p.waitForEvent('workflows.executor.started', 60_000)));
  return procs;
}

async function stopAll(procs: LogdrainProcess[]): Promise<void> {
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Single starts at RATE a second for SECONDS, open loop, with no executor running: the start
 * route's own answer times. The runs are deleted afterwards (no executor is to find them).
 */
async function startsAlone(ctx: Ctx, label: string) {
  const warm = Math.round(RATE * WARMUP_SECONDS);
  const total = Math.round(RATE * SECONDS);
  const answerMs: number[] = [];
  const ids: string[] = [];
  const answers: Promise<void>[] = [];
  const t0 = Date.now() + 50;
  for (let i = 0; i < warm + total; i++) {
    const wait = t0 + (i * 1000) / RATE - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const at = Date.now();
    answers.push(post(ctx, '/runs', { workflowName: WORKFLOW, idempotencyKey: `${label}-${i}` }).then((res) => {
      if (i >= warm) answerMs.push(Date.now() - at);
      if (res.status === 202) ids.push(res.body.runId as string);
    }));
  }
  await Promise.all(answers);
  await ctx.pool.query('delete from workflow_runs where id = any($1::text[])', [ids]);
  answerMs.sort((a, b) => a - b);
  return { runs: total, acceptedWithWarmup: ids.length, p50Ms: percentile(answerMs, 50), p99Ms: percentile(answerMs, 99) };
}

/** Single starts at RATE a second for SECONDS, open loop; start-to-completed of each run. */
async function latency(ctx: Ctx, label: string) {
  const warm = Math.round(RATE * WARMUP_SECONDS);
  const total = Math.round(RATE * SECONDS);
  const sentAt = new Map<string, number>();
  const warmIds: string[] = [];
  const answers: Promise<void>[] = [];
  const t0 = Date.now() + 50;
  let refused = 0;
  let measuredFrom = t0;
  const answerMs: number[] = [];
  for (let i = 0; i < warm + total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const at = Date.now();
    if (i === warm) measuredFrom = at;
    answers.push(post(ctx, '/runs', { workflowName: WORKFLOW, idempotencyKey: `${label}-${i}` }).then((res) => {
      if (i < warm) return void (res.status === 202 && warmIds.push(res.body.runId as string));
      answerMs.push(Date.now() - at);
      if (res.status !== 202) refused += 1;
      else sentAt.set(res.body.runId as string, at);
    }));
  }
  const sendSpanMs = Date.now() - measuredFrom;
  await Promise.all(answers);
  const ids = [...sentAt.keys()];
  await waitCompleted(ctx, [...warmIds, ...ids], 60_000);
  const { rows } = await ctx.pool.query<{ id: string; completed_at: Date }>('select id, completed_at from workflow_runs where id = any($1::text[])', [ids]);
  const ms = rows.map((r) => r.completed_at.getTime() - sentAt.get(r.id)!).sort((a, b) => a - b);
  return {
    runs: total, refused, offeredPerSecond: RATE, sentPerSecond: Math.round((total * 1000) / sendSpanMs),
    p50Ms: percentile(ms, 50), p90Ms: percentile(ms, 90), p99Ms: percentile(ms, 99), maxMs: ms[ms.length - 1]!,
    startAnswer: { p50Ms: percentile(answerMs.sort((a, b) => a - b), 50), p99Ms: percentile(answerMs, 99) },
  };
}

async function main(): Promise<void> {
  const db = await createTestDatabase(ADMIN_URL, 'logdrain_bench');
  const env = {
    DATABASE_URL: db.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info',
    WORKFLOW_RATE_LIMIT_START_PER_MIN: '1000000', WORKFLOW_RATE_LIMIT_BATCH_PER_MIN: '1000000', WORKFLOW_RATE_LIMIT_READ_PER_MIN: '1000000',
  };
  const api = spawnLogdrain(['serve'], { ...env, SEED_FILE: writeSeed(), WORKFLOW_EXECUTOR: 'false' }, profiling());
  const started = await api.waitForEvent('process.started', 60_000);
  const ctx: Ctx = { db, pool: new pg.Pool({ connectionString: db.url, max: SLOTS + 2 }), api, base: `http://127.0.0.1:${started.port as number}`, env };
  const results: Record<string, unknown>[] = [];
  try {
    const bareFirst = await bareLoop(ctx, 'bare-first');
    console.log(`bare loop (first): ${bareFirst.stepsPerSecond.toFixed(0)} steps/s`);
    const alone = await startsAlone(ctx, 'alone');
    console.log(`starts alone (no executor) at ${RATE}/s: the 202 at p50 ${alone.p50Ms} ms, p99 ${alone.p99Ms} ms`);
    const scenarios: Record<string, unknown>[] = [];
    for (const n of [1, 2]) {
      const ids = await queueRuns(ctx, `throughput-${n}`, RUNS);
      const executors = await startExecutors(ctx, n);
      try {
        await waitCompleted(ctx, ids, 120_000);
        const throughput = await stepsPerSecond(ctx, ids);
        console.log(`${n} executor process(es): ${throughput.stepsPerSecond.toFixed(0)} steps/s`);
        const lat = await latency(ctx, `latency-${n}`);
        console.log(`${n} executor process(es) at ${RATE} runs/s: p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms (${lat.refused} refused; the 202 answered at p50 ${lat.startAnswer.p50Ms} ms, p99 ${lat.startAnswer.p99Ms} ms)`);
        scenarios.push({ executors: n, throughput, latency: lat });
      } finally {
        await stopAll(executors);
      }
    }
    const bareLast = await bareLoop(ctx, 'bare-last');
    console.log(`bare loop (last): ${bareLast.stepsPerSecond.toFixed(0)} steps/s`);
    const bare = (bareFirst.stepsPerSecond + bareLast.stepsPerSecond) / 2;
    for (const s of scenarios) {
      const t = s.throughput as { stepsPerSecond: number };
      const l = s.latency as { p99Ms: number };
      results.push({
        ...s,
        stepsRatioToBare: Number((t.stepsPerSecond / bare).toFixed(2)),
        targets: { stepsRatio: TARGET_STEPS_RATIO, stepsRatioMet: t.stepsPerSecond / bare >= TARGET_STEPS_RATIO, p99Ms: TARGET_P99_MS, p99Met: l.p99Ms <= TARGET_P99_MS },
      });
    }
    const report = {
      when: new Date().toISOString(), commit, node: process.version,
      machine: { cpu: cpus()[0]?.model, cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) },
      loadavgAtStart: loadavgStart, loadavgAtEnd: loadavg(),
      settings: { runs: RUNS, rate: RATE, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, slots: SLOTS, steps: STEPS },
      baseline: 'a bare claim-and-complete loop in the benchmark process on the same tables (the executor\'s claim, one statement a step, one to complete), SLOTS loops at once; measured first and last, the mean is the denominator',
      bare: { first: bareFirst, last: bareLast, meanStepsPerSecond: Math.round(bare) },
      startsAlone: alone,
      scenarios: results,
    };
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(new URL('./results/workflows.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
    for (const r of results) {
      const t = r.throughput as { stepsPerSecond: number; runsPerSecond: number };
      const l = r.latency as { p50Ms: number; p99Ms: number; sentPerSecond: number };
      console.log(`${r.executors} executor(s): ${t.stepsPerSecond.toFixed(0)} steps/s (${t.runsPerSecond.toFixed(0)} runs/s) = ${r.stepsRatioToBare as number} of bare; at ${l.sentPerSecond} starts/s p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms`);
    }
  } finally {
    await ctx.pool.end().catch(() => {});
    api.kill('SIGTERM');
    await api.exited;
    await db.drop().catch(() => {});
  }
}

await main();
