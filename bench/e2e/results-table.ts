/**
 * The results tables of docs/benchmarks.md from bench/results/e2e.json (and e2e-paused.json when present):
 * `node --import tsx bench/e2e/results-table.ts`. Prints Markdown; the Latest results
 * section of docs/benchmarks.md carries its latest output, so the figures there are the file's, not retyped.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { RunFigures } from './harness.js';

const read = (name: string) => {
  const url = new URL(`../results/${name}`, import.meta.url);
  return existsSync(url) ? (JSON.parse(readFileSync(url, 'utf8')) as Record<string, any>) : undefined;
};
const e2e = read('e2e.json');
if (!e2e) throw new Error('bench/results/e2e.json is missing: run npm run bench:e2e');
const n = (x: number | null | undefined, digits = 0) => (x == null ? 'n/a' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

const m = e2e.machine;
console.log(`Measured ${e2e.when.slice(0, 16).replace('T', ' ')} UTC on ${m.cores} × ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node} (commit ${e2e.code?.commit ?? '?'}), ${n(e2e.dataSet.records)} records of ${n(e2e.dataSet.recordBytes.mean)} bytes on average${m.loadAverage1m != null ? `; 1-minute load average ${n(m.loadAverage1mAtStart, 1)} at the start, ${n(m.loadAverage1m, 1)} at the end (other work on the same cores)` : ''}.`);
console.log('');
console.log('| run | records | rec/s | rec/CPU-s | main thread | peak RSS MB | bytes/rec on the wire | POSTs |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of e2e.runs as RunFigures[]) {
  const main = r.mainThreadShare == null ? '' : `${n(r.mainThreadShare * 100)}%`;
  console.log(`| ${r.name} | ${n(r.records)} | ${n(r.recordsPerSecond)} | ${n(r.recordsPerCpuSecond)} | ${main} | ${n(r.peakRssMB)} | ${n(r.bytesPerRecord)} | ${n(r.posts)} |`);
}
const ratios = e2e.ratios;
const s = e2e.scenarios ?? {};
console.log('');
console.log('| figure | value |');
console.log('|---|---:|');
console.log(`| logdrain / baseline, rec/CPU-s | ${n(ratios.engineToBaseline, 2)} |`);
console.log(`| logdrain / peer, rec/CPU-s (NDJSON) | ${n(ratios.engineToPeer, 2)} |`);
console.log(`| logdrain-otlp / peer, rec/CPU-s | ${n(ratios.engineOtlpToPeer, 2)} |`);
console.log(`| peer as shipped / peer doing the same work, rec/CPU-s | ${n(ratios.peerDefaultToPeer, 2)} |`);
if (e2e.latency) console.log(`| latency at ${n(e2e.latency.ratePerSecond)} rec/s offered, BATCH_LINGER_MS=100: p50 / p99 (achieved rec/s) | ${n(e2e.latency.p50Ms)} ms / ${n(e2e.latency.p99Ms)} ms (${n(e2e.latency.achievedRecordsPerSecond)}) |`);
if (e2e.latency?.afterFirstSecond) console.log(`| the same, records produced after the run's first second: p50 / p99 | ${n(e2e.latency.afterFirstSecond.p50Ms)} ms / ${n(e2e.latency.afterFirstSecond.p99Ms)} ms |`);
if (s.tenDrains) console.log(`| ten drains per organization: CPU of the run / one drain's | ${n(s.tenDrains.costRatioToOneDrain, 2)} |`);
if (s.tenThousandAgents) {
  const t = s.tenThousandAgents;
  const withPg = t.recordsPerWorkerAndPostgresCpuSecondRatioToEight == null ? '' : `, with Postgres's CPU ${n(t.recordsPerWorkerAndPostgresCpuSecondRatioToEight, 2)}`;
  console.log(`| 10,000 agents / 8 agents, batching across time (${n(t.records)} records): rec/s, rec/CPU-s (records a POST; peak RSS) | ${n(t.recordsPerSecondRatioToEight, 2)}, ${n(t.recordsPerCpuSecondRatioToEight, 2)}${withPg} (${n(t.recordsPerPost, 1)}; ${n(t.peakRssMB, 0)} MB) |`);
  if (t.live) console.log(`| 10,000 agents / 8 agents, live batches only: rec/s, rec/CPU-s (records a POST) | ${n(t.live.recordsPerSecondRatioToEight, 2)}, ${n(t.live.recordsPerCpuSecondRatioToEight, 2)} (${n(t.live.recordsPerPost, 1)}) |`);
}
if (s.twoWorkers) console.log(`| two workers / one (live feed): rec/s, rec/CPU-s | ${n(s.twoWorkers.recordsPerSecondRatioToOne, 2)}, ${n(s.twoWorkers.recordsPerCpuSecondRatioToOne, 2)} |`);
const paused = read('e2e-paused.json');
if (paused) {
  const r = paused.rssMB;
  const parked = paused.pausedDrainBacklogAtEnd != null ? `${n(paused.pausedDrainBacklogAtEnd)} parked at the end` : `${n(paused.recordsForPausedDrain)} records for the paused drain`;
  console.log(`| paused drain, ${n(paused.minutes)} min at ${n(paused.ratePerSecond)} rec/s (${parked}): worker RSS in the second minute / the last / at most, MB | ${n(r.secondWindowMean)} / ${n(r.lastWindowMean)} / ${n(r.max)} |`);
}
if (Object.keys(e2e.failures ?? {}).length > 0) console.log(`\nFailed runs: ${JSON.stringify(e2e.failures)}`);
