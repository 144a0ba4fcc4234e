/**
 * What the reference runners (baseline.ts, otel-peer.ts) share with each other and with the way
 * run.ts measures `logdrain worker`: a kafkajs consumer of the benchmark topic from the beginning
 * (4 partitions consumed concurrently, as the worker does), a clock and a CPU reading taken when
 * the consumer has joined its group, and one final JSON line on stdout once EXPECTED_RECORDS
 * records have been answered 2xx (the contract of run.ts `runRunner`).
 */
import { Kafka, logLevel, type Consumer, type EachBatchPayload } from 'kafkajs';
import { statCpuSeconds, threadCpuSeconds, threadCpuSpent } from '../proc-stat.js';

/** CPU milliseconds (user + system) of the calling thread, the main one here, from /proc (10 ms ticks). */
const mainThreadCpuMs = (): number => statCpuSeconds('/proc/thread-self/stat') * 1000;

export function requiredEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
}

export interface RunnerClock {
  /** Counts records answered 2xx; at EXPECTED_RECORDS prints the report and exits. */
  delivered(records: number): void;
  /** One POST made (for the report). */
  posted(): void;
}

export interface RunnerOptions {
  runner: string;
  /** Called for each fetched batch; awaiting it holds the partition (backpressure). */
  eachBatch: (payload: EachBatchPayload) => Promise<void>;
  /** Called after the report is printed, before exit (flush, close). */
  close?: () => Promise<void>;
}

/**
 * Starts the consumer (in the background: a failure to start ends the process) and returns the
 * clock that ends the run, so the runner's code can refer to it before any batch arrives.
 */
export function startRunner(opts: RunnerOptions): RunnerClock {
  const expected = Number(requiredEnv('EXPECTED_RECORDS'));
  const topic = requiredEnv('KAFKA_TOPIC');
  const kafka = new Kafka({ clientId: `bench-${opts.runner}`, brokers: requiredEnv('KAFKA_BROKERS').split(','), logLevel: logLevel.NOTHING });
  const consumer: Consumer = kafka.consumer({ groupId: requiredEnv('KAFKA_GROUP_ID'), allowAutoTopicCreation: false });
  let start: { at: number; cpu: NodeJS.CpuUsage; mainCpuMs: number; minorFaults: number; threads: Map<number, number> } | undefined;
  let delivered = 0;
  let posts = 0;
  let done = false;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    start ??= { at: performance.now(), cpu: process.cpuUsage(), mainCpuMs: mainThreadCpuMs(), minorFaults: process.resourceUsage().minorPageFault, threads: threadCpuSeconds('self') };
  });
  consumer.on(consumer.events.CRASH, (e) => {
    process.stderr.write(`[${opts.runner}] kafka consumer crashed: ${String(e.payload.error)}\n`);
    process.exit(2);
  });

  const finish = () => {
    done = true;
    const cpu = process.cpuUsage(start!.cpu);
    const wallMs = performance.now() - start!.at;
    // maxRSS: the process's peak resident set in KiB (getrusage), as VmHWM is for the worker.
    const usage = process.resourceUsage();
    const peakRssBytes = usage.maxRSS * 1024;
    const minorFaults = usage.minorPageFault - start!.minorFaults;
    const mainCpuMs = mainThreadCpuMs() - start!.mainCpuMs;
    if (process.env.BENCH_THREADS) {
      process.stderr.write(`[${opts.runner}] threads (id - pid: CPU s): ${threadCpuSpent(process.pid, start!.threads, threadCpuSeconds('self'))}\n`);
    }
    process.stdout.write(`${JSON.stringify({ runner: opts.runner, records: delivered, wallMs, cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000, mainCpuMs, minorFaults, peakRssBytes, posts })}\n`);
    void (async () => {
      await opts.close?.().catch(() => {});
      await consumer.disconnect().catch(() => {});
      process.exit(0);
    })();
  };

  void (async () => {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ partitionsConsumedConcurrently: 4, autoCommitInterval: 200, eachBatch: opts.eachBatch });
  })().catch((e: unknown) => {
    process.stderr.write(`[${opts.runner}] consumer did not start: ${String(e)}\n`);
    process.exit(2);
  });
  return {
    delivered(records) {
      delivered += records;
      if (!done && delivered >= expected) finish();
    },
    posted() {
      posts++;
    },
  };
}

/** Resolves when `cond` holds, checking after each call of `wake` (no polling loop on the CPU). */
export class Gate {
  private waiters: (() => void)[] = [];
  async until(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise<void>((r) => this.waiters.push(r));
  }
  wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }
}
