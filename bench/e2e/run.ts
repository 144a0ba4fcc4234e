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
 * then the scenarios of the performance targets (docs/benchmarks.md), each compared with the `logdrain` run:
 *
 *   logdrain-10-drains   ten drains per organization, each taking every record (cost ratio)
 *   logdrain-10k-agents  AGENT_RECORDS records (default 1,000,000) from 10,000 distinct agents instead
 *                        of 8, with batching across time (BATCH_SPILL_*); -live: the first RECORDS
 *                        of them without it (context)
 *   logdrain-2-workers   two `logdrain worker` processes in one consumer group against one (both
 *                        fed live once the group has settled: logdrain-1-worker-live, -2-workers-live)
 *   logdrain-latency     BATCH_LINGER_MS=100 fed at RATE records a second: Kafka append to 2xx
 *   logdrain-replay      the data set consumed live while each drain replays the platform copy the
 *                        run before stored (its records under other ids, an hour earlier): live
 *                        throughput beside live alone, and the replayed records by id
 *
 * Figures: records per second, records per CPU-second of the consuming processes, peak RSS,
 * bytes on the wire; ratios to the baseline and the peer of the same run (machines here are
 * shared and noisy). Results: bench/results/e2e.json. The paused-drain scenario is its own
 * command (`npm run bench:paused`, paused.ts): it takes ten minutes.
 *
 * Data set (documented in docs/benchmarks.md): RECORDS records (default 100,000) of 4
 * organizations x 2 agents (8 resources), synthetic (src/devtools/synthetic.ts): messages of 4 to 124
 * words (10% long), about 30% carrying a bearer token the built-in scrub pattern replaces, trace
 * ids, three attributes; severities debug to error. Each organization has one drain taking every
 * record (minSeverity debug), so every runner delivers each record once.
 */
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { syntheticRecords } from '../../src/devtools/synthetic.js';
import { decodeArrival, type Arrival } from './receiver.js';
import { manyAgentOrgs, ORGS, PARTITIONS, log, machine, startHarness, type RunFigures } from './harness.js';

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const RATE = Number(process.env.RATE ?? 20_000);
const LATENCY_SECONDS = Number(process.env.LATENCY_SECONDS ?? 10);
/** Rounds of baseline, peer and logdrain (see round() below); the ratios reported are their medians. */
const REPEAT = Math.max(1, Number(process.env.BENCH_REPEAT ?? 1));
/** BENCH_ONLY=logdrain,baseline runs a subset (for iterating); the default runs everything. */
const ONLY = process.env.BENCH_ONLY?.split(',');
const want = (name: string) => ONLY === undefined || ONLY.includes(name);

const topic = 'bench-records';
const liveTopic = 'bench-live';
const agentsTopic = 'bench-agents';
const scaleTopics = ['bench-scale-1', 'bench-scale-2'] as const;
/** The 10,000-agent data set: the same organizations, 2,500 agents each. */
const MANY_AGENTS = manyAgentOrgs(2500);

/**
 * The 10,000-agent data set is larger (AGENT_RECORDS, default 1,000,000: 100 records an agent), so
 * batches that fill across time have records to fill with, over enough partitions to stay under the
 * mock broker's 5 MB a partition (records average about 630 bytes).
 */
const AGENT_RECORDS = Number(process.env.AGENT_RECORDS ?? 1_000_000);
const AGENT_PARTITIONS = Math.max(PARTITIONS, Math.ceil(AGENT_RECORDS / 5000));
/** Batching across time for that scenario (docs/operations.md, Configuration: BATCH_SPILL_*). */
const SPILL_ENV = { BATCH_SPILL_BELOW_RECORDS: process.env.SPILL_BELOW ?? '50', BATCH_SPILL_LINGER_MS: process.env.SPILL_LINGER_MS ?? '15000' };

/** Seconds from the first arrival of a run to its last. */
const arrivalSpanSeconds = (arrivals: readonly Arrival[]) => (Math.max(...arrivals.map((a) => a.at)) - Math.min(...arrivals.map((a) => a.at))) / 1000;

const loadAtStart = loadavg()[0];
const h = await startHarness({ records: RECORDS, topics: [topic, liveTopic, { name: agentsTopic, partitions: AGENT_PARTITIONS }, ...scaleTopics] });
const results: Record<string, unknown> = {};
const runs: RunFigures[] = [];
/** A run that fails is recorded as failed and the others still run (results stay comparable). */
const failures: Record<string, string> = {};
async function attempt<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
  if (!want(name)) return undefined;
  try {
    return await fn();
  } catch (e) {
    failures[name] = (e as Error).message;
    log(`  ${name} FAILED: ${(e as Error).message}`);
    return undefined;
  }
}
const keep = (f: RunFigures) => {
  runs.push(f);
  log(`  ${f.name}: ${Math.round(f.recordsPerSecond)} rec/s, ${Math.round(f.recordsPerCpuSecond)} rec/CPU-s, peak RSS ${Math.round(f.peakRssMB)} MB, ${Math.round(f.bytesPerRecord)} B/rec, ${f.posts} posts${f.postgresCpuSeconds !== undefined ? `, Postgres ${f.postgresCpuSeconds.toFixed(2)} CPU-s` : ""}`);
  return f;
};
try {
  // The data set, produced once.
  log(`producing ${RECORDS} records`);
  const records = [...syntheticRecords(RECORDS, { orgs: ORGS, idPrefix: 'e2e', seed: 2026 })];
  await h.produce(topic, records);
  const sizes = records.map((r) => Buffer.byteLength(JSON.stringify(r))).sort((a, b) => a - b);
  results.dataSet = {
    records: RECORDS, organizations: ORGS.length, agents: ORGS.length * 2, partitions: PARTITIONS,
    recordBytes: { mean: sizes.reduce((a, b) => a + b, 0) / sizes.length, p50: sizes[Math.floor(sizes.length / 2)], p99: sizes[Math.floor(sizes.length * 0.99)], max: sizes.at(-1) },
    scrubbableShare: records.filter((r) => (r.message ?? '').includes('Bearer ')).length / records.length,
  };

  /**
   * One round of the contenders the ratios compare, each named with `suffix` (its own receiver
   * path and consumer group). BENCH_REPEAT=n runs n rounds back to back and reports each ratio's
   * median over the rounds: on these machines one configuration's figures vary by 10 to 30% from
   * run to run, so one round's ratio can mislead.
   */
  /** First to last arrival of each round's logdrain run: live delivery alone, as the replay scenario measures it. */
  const liveAloneSeconds: number[] = [];
  async function round(suffix: string) {
    const named = (name: string) => `${name}${suffix}`;
    const baseline = await attempt('baseline', async () => keep(await h.runRunner(named('baseline'), 'baseline.ts', {})));
    const peer = await attempt('peer', async () => keep(await h.runRunner(named('peer'), 'otel-peer.ts', { PEER_GZIP: '1', PEER_SCRUB: '1' })));
    const peerDefault = await attempt('peer-default', async () => keep(await h.runRunner(named('peer-default'), 'otel-peer.ts', { PEER_GZIP: '0', PEER_SCRUB: '0' })));
    const engine = await attempt('logdrain', async () => {
      const run1 = await h.runLogdrain(named('logdrain'), 'ndjson');
      // Every record arrived once per drain, at its own organization's drain.
      const ids = new Set<string>();
      for (const a of run1.arrivals) for (const r of decodeArrival(a)) {
        if (!a.path.includes(`/${r.orgId}/`)) throw new Error(`record ${r.id} of ${r.orgId} arrived at ${a.path}`);
        ids.add(r.id);
      }
      if (ids.size !== RECORDS) throw new Error(`logdrain delivered ${ids.size} distinct records of ${RECORDS}`);
      liveAloneSeconds.push(arrivalSpanSeconds(run1.arrivals));
      return keep(run1.f);
    });
    const engineOtlp = await attempt('logdrain-otlp', async () => keep((await h.runLogdrain(named('logdrain-otlp'), 'otlp')).f));
    return { baseline, peer, peerDefault, engine, engineOtlp };
  }
  const rounds = [await round('')];
  for (let i = 2; i <= REPEAT; i++) rounds.push(await round(`-r${i}`));
  const { engine } = rounds[0]!;

  const scenarios: Record<string, unknown> = {};
  await attempt('logdrain-10-drains', async () => {
    // Ten drains of each organization select the same records: the cost of the run per consumed
    // record against one drain each (the issue's bound: at most 3 times).
    const ten = keep((await h.runLogdrain('logdrain-10-drains', 'ndjson', {}, { perOrg: 10 })).f);
    scenarios.tenDrains = {
      drainsPerOrg: 10, deliveredRecords: ten.records, cpuSeconds: ten.cpuSeconds, peakRssMB: ten.peakRssMB,
      costRatioToOneDrain: engine ? ten.cpuSeconds / engine.cpuSeconds : null,
    };
  });
  await attempt('logdrain-10k-agents', async () => {
    // The live path first, on the first RECORDS records of the topic (context: a record or two a POST),
    // then the whole data set with batching across time (BATCH_SPILL_*): the scenario's figures.
    log(`producing ${AGENT_RECORDS} records of 10,000 agents over ${AGENT_PARTITIONS} partitions`);
    await h.produce(agentsTopic, syntheticRecords(AGENT_RECORDS, { orgs: MANY_AGENTS, idPrefix: 'agents', seed: 2027 }));
    const live = keep((await h.runLogdrain('logdrain-10k-agents-live', 'ndjson', {}, { topicName: agentsTopic, expected: Math.min(RECORDS, AGENT_RECORDS) })).f);
    const many = keep((await h.runLogdrain('logdrain-10k-agents', 'ndjson', SPILL_ENV, { topicName: agentsTopic, expected: AGENT_RECORDS })).f);
    const toEight = (f: RunFigures) => ({
      posts: f.posts, recordsPerPost: f.records / f.posts, postgresCpuSeconds: f.postgresCpuSeconds,
      recordsPerSecondRatioToEight: engine ? f.recordsPerSecond / engine.recordsPerSecond : null,
      recordsPerCpuSecondRatioToEight: engine ? f.recordsPerCpuSecond / engine.recordsPerCpuSecond : null,
      // Worker and Postgres CPU together, against the same for eight agents: spilling moves work into Postgres.
      recordsPerWorkerAndPostgresCpuSecondRatioToEight: engine?.postgresCpuSeconds !== undefined && f.postgresCpuSeconds !== undefined
        ? (f.records / (f.cpuSeconds + f.postgresCpuSeconds)) / (engine.records / (engine.cpuSeconds + engine.postgresCpuSeconds))
        : null,
    });
    scenarios.tenThousandAgents = {
      agents: 10_000, records: AGENT_RECORDS, recordsPerAgent: AGENT_RECORDS / 10_000, spill: SPILL_ENV,
      ...toEight(many), peakRssMB: many.peakRssMB,
      live: { records: live.records, ...toEight(live) },
    };
  });
  await attempt('logdrain-2-workers', async () => {
    // One worker, then two in one group, each on an empty topic: once the group has settled, the
    // data set is produced at full speed and consumed as it arrives (the same way for both).
    const live = (t: string, workers: number) =>
      h.runLogdrain(`logdrain-${workers}-worker${workers > 1 ? 's' : ''}-live`, 'ndjson', {}, { topicName: t, workers, settle: true, feed: () => h.produce(t, records) });
    const one = keep((await live(scaleTopics[0], 1)).f);
    const two = keep((await live(scaleTopics[1], 2)).f);
    scenarios.twoWorkers = {
      workers: 2, recordsPerSecond: two.recordsPerSecond, recordsPerCpuSecond: two.recordsPerCpuSecond,
      oneWorker: { recordsPerSecond: one.recordsPerSecond, recordsPerCpuSecond: one.recordsPerCpuSecond },
      recordsPerSecondRatioToOne: two.recordsPerSecond / one.recordsPerSecond,
      recordsPerCpuSecondRatioToOne: two.recordsPerCpuSecond / one.recordsPerCpuSecond,
    };
  });

  await attempt('logdrain-replay', async () => {
    // The platform copy the last run stored (the data set's records) is the window each drain
    // replays while the same records are consumed live again: the live records' throughput beside
    // live alone (the logdrain runs', first to last arrival). Live records go first (docs/delivery.md,
    // Replays); the target is at least 0.7 of live alone.
    if (liveAloneSeconds.length === 0) throw new Error('needs the logdrain run before it (BENCH_ONLY=logdrain,logdrain-replay)');
    await h.query('drop table if exists bench_replay_source');
    await h.query('create table bench_replay_source as select * from agent_log_pages');
    const copied = Number((await h.query('select coalesce(sum(records), 0)::int as n from bench_replay_source'))[0]!.n);
    if (copied === 0) throw new Error('the run before left no platform copy to replay');
    const replays: string[] = [];
    const run = await h.runLogdrain('logdrain-replay', 'ndjson', {}, {
      expected: RECORDS + copied,
      async withDrains(drains) {
        // The copy under other ids: the live records (the same data set) are then new records, not
        // the copy's again (which reads would answer once). And an hour earlier, with the window
        // ending at its last record: the live records the run stores carry the data set's own times,
        // and a window reaching them would hold each record the worker stores ahead of a replay's
        // position too (a replay sends what its window holds when it reads it), so the replays
        // would send more than the copy and the run would end, at its count, before they had.
        // Each page's records rewritten so, in its body and its summary (the pages' bounds with them).
        await h.query(`update bench_replay_source set page = 'rp-' || page, ts_min = ts_min - interval '1 hour', ts_max = ts_max - interval '1 hour',
          day = ((ts_min - interval '1 hour') at time zone 'UTC')::date,
          body = (select string_agg(jsonb_set(jsonb_set(l::jsonb, '{id}', to_jsonb('rp-' || (l::jsonb ->> 'id'))), '{timestamp}',
            to_jsonb(to_char(((l::jsonb ->> 'timestamp')::timestamptz - interval '1 hour') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))::text, E'\\n' order by n)
            from string_to_table(body, E'\\n') with ordinality as b(l, n)),
          meta = (select string_agg(jsonb_set(jsonb_set(m::jsonb, '{0}', to_jsonb((m::jsonb ->> 0)::bigint - 3600000)), '{1}',
            to_jsonb('rp-' || (m::jsonb ->> 1)))::text, E'\\n' order by n)
            from string_to_table(meta, E'\\n') with ordinality as s(m, n))`);
        // An hour earlier may be the day before (a run just after midnight UTC), whose partition the
        // bench's database, made today, does not have: made as the store names its partitions.
        for (const p of await h.query("select distinct day::text as first, (day + 1)::text as next, to_char(day, 'YYYYMMDD') as ymd from bench_replay_source")) {
          await h.query(`create table if not exists agent_log_pages_${String(p.ymd)} partition of agent_log_pages for values from ('${String(p.first)}') to ('${String(p.next)}')`);
        }
        await h.query('insert into agent_log_pages select * from bench_replay_source');
        // To the millisecond, as the API takes the bounds: the last one a millisecond past the copy's last record.
        const [bounds] = await h.query("select min(ts_min) as since, max(ts_max) + interval '1 millisecond' as until from bench_replay_source");
        const window = { since: new Date(bounds!.since as Date).toISOString(), until: new Date(bounds!.until as Date).toISOString() };
        for (const d of drains) {
          const r = await h.call('POST', `/admin/orgs/${d.orgId}/log-drains/${d.id}/replays`, window);
          replays.push(String(r.id));
        }
      },
    });
    keep(run.f);
    // Each record by id: the replays' records are the copy's (`rp-`), each once unless a delivery
    // was sent again (at least once: an attempt timed out at the worker but received here), counted
    // apart from the distinct records; any other id in a replay batch is a record outside the copy.
    const replayCounts = new Map<string, number>();
    const liveIds = new Set<string>();
    for (const a of run.arrivals) {
      for (const r of decodeArrival(a)) {
        if (a.replay) replayCounts.set(r.id, (replayCounts.get(r.id) ?? 0) + 1);
        else liveIds.add(r.id);
      }
    }
    const replayedDistinct = [...replayCounts.keys()].filter((id) => id.startsWith('rp-')).length;
    const replayedOutsideCopy = replayCounts.size - replayedDistinct;
    const replayedDuplicates = [...replayCounts.values()].reduce((n, c) => n + c - 1, 0);
    if (replayedOutsideCopy > 0) throw new Error(`the replays sent ${replayedOutsideCopy} records that are not the copy's`);
    if (replayedDistinct < copied) log(`  logdrain-replay: the run ended with ${replayedDistinct} of the copy's ${copied} records replayed (${replayedDuplicates} sent again)`);
    const live = run.arrivals.filter((a) => !a.replay);
    const liveRecords = live.reduce((n, a) => n + a.records, 0);
    const replayed = run.arrivals.filter((a) => a.replay).reduce((n, a) => n + a.records, 0);
    const first = Math.min(...run.arrivals.map((a) => a.at));
    // From the first live arrival, as live alone is measured: replays a worker sends while it is still
    // joining its consumer group (before any live record can be read) take nothing from live ones.
    const liveWithReplaySeconds = arrivalSpanSeconds(live);
    // The first measure, from the run's first arrival, whatever it was (kept for comparison with earlier figures).
    const liveWithReplayFromFirstArrivalSeconds = (Math.max(...live.map((a) => a.at)) - first) / 1000;
    // How long the replays took to send everything, from the run's first arrival to their last.
    const replaysDoneSeconds = (Math.max(...run.arrivals.filter((a) => a.replay).map((a) => a.at)) - first) / 1000;
    // Where the replays' records went in time: before the first live record, beside live ones, after the last.
    const firstLive = Math.min(...live.map((a) => a.at));
    const lastLive = Math.max(...live.map((a) => a.at));
    const replayedIn = (from: number, to: number) => run.arrivals.filter((a) => a.replay && a.at >= from && a.at < to).reduce((n, a) => n + a.records, 0);
    const replayedBeforeLive = replayedIn(-Infinity, firstLive);
    const replayedBesideLive = replayedIn(firstLive, lastLive + 1);
    const liveStartSeconds = (firstLive - first) / 1000;
    const alone = [...liveAloneSeconds].sort((a, b) => a - b)[Math.floor(liveAloneSeconds.length / 2)]!;
    scenarios.replay = {
      replays: replays.length, platformCopyRecords: copied, replayedRecords: replayed, replayedDistinct, replayedDuplicates,
      liveRecords, liveDistinct: liveIds.size,
      liveAloneSeconds: alone, liveWithReplaySeconds, replaysDoneSeconds, liveStartSeconds, replayedBeforeLive, replayedBesideLive,
      liveRecordsPerSecondAlone: RECORDS / alone, liveRecordsPerSecondWithReplay: liveRecords / liveWithReplaySeconds,
      liveThroughputRatio: (liveRecords / liveWithReplaySeconds) / (RECORDS / alone),
      liveWithReplayFromFirstArrivalSeconds,
      liveThroughputRatioFromFirstArrival: (liveRecords / liveWithReplayFromFirstArrivalSeconds) / (RECORDS / alone),
    };
    await h.query('drop table if exists bench_replay_source');
  });

  await attempt('logdrain-latency', async () => {
    // Latency: a live stream at RATE records a second, BATCH_LINGER_MS=100, Kafka append to 2xx.
    const liveCount = RATE * LATENCY_SECONDS;
    const live = await h.runLogdrain('logdrain-latency', 'ndjson', { BATCH_LINGER_MS: '100' }, {
      topicName: liveTopic, expected: liveCount,
      feed: () => h.feedLive(liveTopic, RATE, LATENCY_SECONDS, { count: liveCount, options: { orgs: ORGS, idPrefix: 'live', seed: 7 } }),
    });
    keep(live.f);
    // [produced at, latency] of every record: the whole run's percentiles, and each second's (the first is the warm-up).
    const samples = live.arrivals.flatMap((a) => decodeArrival(a).map((r) => [Date.parse(r.timestamp), a.at - Date.parse(r.timestamp)] as const));
    const start = samples.reduce((m, [t]) => Math.min(m, t), Infinity);
    const percentiles = (lat: number[]) => {
      lat.sort((a, b) => a - b);
      const pct = (q: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * q))]!;
      return { records: lat.length, p50Ms: pct(0.5), p99Ms: pct(0.99), maxMs: lat.at(-1)! };
    };
    const whole = percentiles(samples.map(([, l]) => l));
    const seconds = new Map<number, number[]>();
    for (const [t, l] of samples) {
      const second = Math.floor((t - start) / 1000);
      const list = seconds.get(second);
      if (list) list.push(l);
      else seconds.set(second, [l]);
    }
    const bySecond = [...seconds].sort(([a], [b]) => a - b).map(([second, lat]) => ({ second, ...percentiles(lat) }));
    if (process.env.BENCH_LATENCY_SLICES) {
      const slices = new Map<number, number[]>();
      for (const [t, l] of samples) {
        if (t - start >= 2000) continue;
        const k = Math.floor((t - start) / 100);
        const list = slices.get(k);
        if (list) list.push(l);
        else slices.set(k, [l]);
      }
      log(`slices: ${[...slices].sort(([a], [b]) => a - b).map(([k, l]) => { const p = percentiles(l); return `${k * 100}:${p.p50Ms}/${p.p99Ms}`; }).join(' ')}`);
    }
    const afterFirstSecond = percentiles(samples.filter(([t]) => t - start >= 1000).map(([, l]) => l));
    results.latency = {
      ratePerSecond: RATE, seconds: LATENCY_SECONDS, lingerMs: 100, p50Ms: whole.p50Ms, p99Ms: whole.p99Ms, maxMs: whole.maxMs,
      afterFirstSecond: { p50Ms: afterFirstSecond.p50Ms, p99Ms: afterFirstSecond.p99Ms }, bySecond,
      peakRssMB: live.f.peakRssMB, achievedRecordsPerSecond: live.f.recordsPerSecond,
    };
    log(`latency at ${RATE}/s with BATCH_LINGER_MS=100: p50 ${whole.p50Ms} ms, p99 ${whole.p99Ms} ms (after the first second: ${afterFirstSecond.p50Ms} / ${afterFirstSecond.p99Ms})`);
  });

  results.runs = runs;
  results.scenarios = scenarios;
  results.failures = failures;
  const ratio = (a: RunFigures | undefined, b: RunFigures | undefined) => (a && b ? a.recordsPerCpuSecond / b.recordsPerCpuSecond : null);
  // Worker and Postgres CPU together against the baseline's (which writes nothing to Postgres).
  const wholeSystem = (a: RunFigures | undefined, b: RunFigures | undefined) =>
    a && b && a.postgresCpuSeconds !== undefined ? a.records / (a.cpuSeconds + a.postgresCpuSeconds) / b.recordsPerCpuSecond : null;
  const perRound = rounds.map((x) => ({
    engineToBaseline: ratio(x.engine, x.baseline),
    engineWholeSystemToBaseline: wholeSystem(x.engine, x.baseline),
    engineOtlpWholeSystemToBaseline: wholeSystem(x.engineOtlp, x.baseline),
    enginePostgresCpuSecondsPer100k: x.engine?.postgresCpuSeconds !== undefined ? (x.engine.postgresCpuSeconds / x.engine.records) * 100_000 : null,
    engineOtlpPostgresCpuSecondsPer100k: x.engineOtlp?.postgresCpuSeconds !== undefined ? (x.engineOtlp.postgresCpuSeconds / x.engineOtlp.records) * 100_000 : null,
    engineToPeer: ratio(x.engine, x.peer),
    engineOtlpToPeer: ratio(x.engineOtlp, x.peer),
    peerDefaultToPeer: ratio(x.peerDefault, x.peer),
  }));
  const median = (xs: (number | null)[]) => {
    const v = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
    return v.length === 0 ? null : v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  // One round: its ratios. Several: each ratio's median over the rounds, and every round's in ratioRounds.
  results.ratios = Object.fromEntries(Object.keys(perRound[0]!).map((k) => [k, median(perRound.map((r) => r[k as keyof (typeof perRound)[0]]))]));
  if (rounds.length > 1) results.ratioRounds = perRound;

  console.table(runs.map((r) => ({
    run: r.name, records: r.records, 'rec/s': Math.round(r.recordsPerSecond), 'rec/CPU-s': Math.round(r.recordsPerCpuSecond),
    'peak RSS MB': Math.round(r.peakRssMB), 'bytes/rec on wire': Math.round(r.bytesPerRecord), posts: r.posts,
  })));
  const code = { commit: commitOfTree(), cli: process.env.BENCH_CLI ?? 'dist/cli.js' };
  const out = { when: new Date().toISOString(), machine: { ...machine(), loadAverage1mAtStart: loadAtStart }, command: 'npm run bench:e2e', code, ...results };
  mkdirSync(new URL('../results', import.meta.url), { recursive: true });
  if (ONLY === undefined) writeFileSync(new URL('../results/e2e.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
  else console.log(JSON.stringify(out, null, 2));
  const r = results.ratios as Record<string, number | null>;
  const fmt = (x: number | null | undefined) => (x == null ? 'n/a' : x.toFixed(2));
  if (results.latency) console.log(`latency: ${JSON.stringify(results.latency)}`);
  console.log(`scenarios: ${JSON.stringify(scenarios)}`);
  console.log(`whole_system_to_baseline=${fmt(r.engineWholeSystemToBaseline)} otlp_whole_system_to_baseline=${fmt(r.engineOtlpWholeSystemToBaseline)} postgres_cpu_s_per_100k=${fmt(r.enginePostgresCpuSecondsPer100k)}/${fmt(r.engineOtlpPostgresCpuSecondsPer100k)}`);
  console.log(`ratio_to_baseline=${fmt(r.engineToBaseline)} ratio_to_peer=${fmt(r.engineToPeer)}`);
} finally {
  await h.close();
}

/** The commit of the tree the harness runs from; "unknown" outside a git checkout (an exported copy). */
function commitOfTree(): string {
  try {
    return execSync('git rev-parse --short HEAD', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}
