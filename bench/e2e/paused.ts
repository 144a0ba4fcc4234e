/**
 * The paused-drain benchmark (`npm run bench:paused`): does a worker's memory stay flat
 * while one drain is paused and its records pile up? They must park in Postgres, not in memory.
 *
 * One `logdrain worker`, one ndjson drain per organization (4), the first organization's drain
 * paused before the worker starts; a live stream of PAUSED_RATE records a second (default 2,000)
 * for PAUSED_MINUTES (default 10), a quarter of them for the paused drain. Every
 * PAUSED_SAMPLE_SECONDS (default 10) it samples the worker's RSS (/proc VmRSS) and the paused
 * drain's backlog (the REST read form's `health.backlog`). The run ends when the other drains have
 * received all their records, or two minutes after the feed if they have not (then `others`
 * says how many arrived). Results: bench/results/e2e-paused.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { syntheticRecords } from '../../src/devtools/synthetic.js';
import { ORGS, log, machine, procFigures, startHarness, type DrainRef } from './harness.js';

const MINUTES = Number(process.env.PAUSED_MINUTES ?? 10);
const RATE = Number(process.env.PAUSED_RATE ?? 2000);
const SAMPLE_SECONDS = Number(process.env.PAUSED_SAMPLE_SECONDS ?? 10);
const topic = 'bench-paused';
const seconds = Math.round(MINUTES * 60);
const count = RATE * seconds;
const dataOptions = { orgs: ORGS, idPrefix: 'paused', seed: 11 };
const data = () => syntheticRecords(count, dataOptions);
const pausedOrg = ORGS[0]!.orgId;
let forOthers = 0;
for (const r of data()) if (r.orgId !== pausedOrg) forOthers++;

const h = await startHarness({ records: count, topics: [topic] });
const startedAt = Date.now();
const samples: { seconds: number; rssMB: number; backlog: number | null }[] = [];
let paused: DrainRef | undefined;
try {
  const run = await h.runLogdrain('logdrain-paused', 'ndjson', {}, {
    topicName: topic, expected: forOthers, settleAfterFeedMs: 120_000,
    async withDrains(drains) {
      paused = drains.find((d) => d.orgId === pausedOrg)!;
      await h.call('POST', `/admin/orgs/${paused.orgId}/log-drains/${paused.id}/pause`, { reason: 'bench:paused' });
    },
    feed: () => h.feedLive(topic, RATE, seconds, { count, options: dataOptions }),
    sample: {
      everyMs: SAMPLE_SECONDS * 1000,
      fn([pid]) {
        const rssMB = procFigures(pid!).rssBytes / 1e6;
        const at = (Date.now() - startedAt) / 1000;
        void h.call('GET', `/admin/orgs/${paused!.orgId}/log-drains/${paused!.id}`).then(
          (d) => samples.push({ seconds: at, rssMB, backlog: Number((d.health as { backlog?: number } | undefined)?.backlog ?? NaN) }),
          () => samples.push({ seconds: at, rssMB, backlog: null }),
        );
        log(`  ${Math.round(at)} s: worker RSS ${rssMB.toFixed(0)} MB`);
      },
    },
  });
  samples.sort((a, b) => a.seconds - b.seconds);
  // Flat: the last minute's RSS against the second minute's (the first holds start-up and
  // warm-up); in runs shorter than five minutes, a fifth of the run stands for a minute.
  const window = (from: number, to: number) => samples.filter((s) => s.seconds >= from && s.seconds < to).map((s) => s.rssMB);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const last = samples.at(-1)?.seconds ?? 0;
  const span = Math.min(60, seconds / 5);
  const early = mean(window(span, 2 * span));
  const late = mean(window(last - span, last + 1));
  const out = {
    when: new Date().toISOString(), machine: machine(), command: 'npm run bench:paused',
    minutes: MINUTES, ratePerSecond: RATE, recordsProduced: count, recordsForPausedDrain: count - forOthers,
    pausedDrainBacklogAtEnd: samples.at(-1)?.backlog ?? null,
    rssMB: { windowSeconds: span, secondWindowMean: early, lastWindowMean: late, growthLastToSecondWindow: early && late ? late - early : null, max: Math.max(...samples.map((s) => s.rssMB)), peakHwm: run.f.peakRssMB },
    others: run.f,
    samples,
  };
  mkdirSync(new URL('../results', import.meta.url), { recursive: true });
  writeFileSync(new URL('../results/e2e-paused.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
  console.log(JSON.stringify({ ...out, samples: undefined }));
} finally {
  await h.close();
}
