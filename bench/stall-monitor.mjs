/**
 * An event-loop stall monitor, loaded into a measured process with `--import` (bench:ingest loads
 * it into every process it measures; with a profile:
 * `BENCH_INGEST_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'`).
 *
 * A timer due every 5 ms notes each turn that held it up past STALL_MS, with the time the API's
 * thread itself ran on a CPU meanwhile (`cpuMs`, from the kernel's schedstat of the thread: a stall
 * the machine caused by running other processes shows a long wall time and little CPU; the
 * thread's own synchronous work, its collections included, shows as CPU), and a gc observer each
 * collection longer than 1 ms (with its kind, perf_hooks' constants: 1 scavenge, 4 mark-compact, 8 incremental
 * marking, 16 weak callbacks); both are written at exit to `<tmpdir>/logdrain-stalls-<pid>.json`,
 * their times in microseconds of the monotonic clock that a V8 CPU profile's timestamps use, so
 * that bench/stall-report.ts can name the samples inside each stall.
 */
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const EVERY_MS = 5;
const STALL_MS = 20;
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
/** performance.now() (ms) to the monotonic clock (µs). */
const perfToUs = nowUs() - performance.now() * 1000;

/** Nanoseconds the main thread (its task id is the process's) has run on a CPU; undefined off Linux. */
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const ranNs = () => {
  try {
    return Number(readFileSync(SCHEDSTAT, 'latin1').split(' ')[0]);
  } catch {
    return undefined;
  }
};

const stalls = [];
const gcs = [];
let last = nowUs();
let lastRan = ranNs();
setInterval(() => {
  const now = nowUs();
  const ran = ranNs();
  const heldMs = (now - last) / 1000 - EVERY_MS;
  if (heldMs > STALL_MS) {
    const cpuMs = ran === undefined || lastRan === undefined ? undefined : Math.round((ran - lastRan) / 1e5) / 10;
    stalls.push({ startUs: last + EVERY_MS * 1000, endUs: now, ms: Math.round(heldMs * 10) / 10, cpuMs });
  }
  last = now;
  lastRan = ran;
}, EVERY_MS).unref();

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.duration > 1) gcs.push({ startUs: Math.round(perfToUs + e.startTime * 1000), ms: Math.round(e.duration * 10) / 10, kind: e.detail?.kind });
  }
}).observe({ entryTypes: ['gc'] });

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();

process.on('exit', () => {
  const ms = (ns) => Math.round(ns / 1e5) / 10;
  writeFileSync(process.env.STALL_MONITOR_FILE ?? join(tmpdir(), `logdrain-stalls-${process.pid}.json`), JSON.stringify({
    pid: process.pid,
    exitUs: nowUs(),
    stallMs: STALL_MS,
    delay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), count: delay.count },
    stalls,
    gcs,
  }));
});
