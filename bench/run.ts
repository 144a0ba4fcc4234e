/**
 * Stage micro-benchmarks (tinybench). Figures are reported per record and as
 * ratios to a baseline measured in the same run (JSON.parse of the same
 * record), since these machines are shared and noisy. Results go to
 * bench/results/stages.json with the machine's description.
 *
 * Stages: Kafka record batch decode (kafkajs's record decoder and the worker's), decode, select, shape, shape + scrub (built-ins; built-ins and
 * customer RE2 rules), batch (the batcher), each encoder, gzip, sign,
 * account (the accountant's write path on PGlite in memory), the OTLP
 * comparison with otlp-transformer, and a pipeline pass with 1 drain against
 * 10 drains selecting the same records (shared shaping and encoding).
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { gzipSync, gzip as gzipCb, constants } from 'node:zlib';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { Bench } from 'tinybench';
import { ulid } from 'ulid';
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { decodeRecord } from '../src/model/record.js';
import { compileSelector } from '../src/select/selector.js';
import { shapeRecord } from '../src/shape/delivered-record.js';
import { compileScrubber } from '../src/shape/scrubber.js';
import { jsonEncoder } from '../src/encode/json.js';
import { ndjsonEncoder } from '../src/encode/ndjson.js';
import { otlpEncoder } from '../src/encode/otlp.js';
import { vendorAEncoder, vendorBEncoder } from '../src/encode/vendors.js';
import { gzipOnce } from '../src/encode/shared-encoding.js';
import { SerialisedEntry, type BatchEntry, type EncodableBatch } from '../src/encode/encoder.js';
import { buildResource, resourceKey } from '../src/model/resource.js';
import { createBatcher, type ReadyBatch } from '../src/batch/batcher.js';
import { signBatch, generateSecret, signingKey } from '../src/sign/standard-webhooks.js';
import { syntheticRecords } from '../src/devtools/synthetic.js';
import { createAccountant } from '../src/account/accountant.js';
import { openStore } from '../src/store/store.js';
import { dayOf, hourOf } from '../src/model/time.js';
import { DELIVERY_RETENTION_MS } from '../src/model/delivery.js';
import { createLogger } from '../src/telemetry/logger.js';
import { Ticket } from '../src/source/offset-tracker.js';
import type { DrainPlan } from '../src/plan/drain-plans.js';
import { sdkLogRecords } from './otlp-sdk-records.js';
import { recordDecoder } from '../src/source/kafka-record-decoder.js';
import { batchDecoderWith, stockRecordDecoder } from '../test/helpers/kafkajs-stock.js';
import { drainRow, pipelineFor } from '../test/unit/pipeline/fixture.js';

const N = 1000;
const RECORDS = [...syntheticRecords(N, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_a', name: 'a' }] }], seed: 42 })];
// Distinct record times with microseconds, as a real stream has (the synthetic ones share a millisecond).
const base = Date.parse('2026-11-23T10:00:00Z');
RECORDS.forEach((r, i) => void (r.timestamp = new Date(base + i * 7).toISOString().replace('Z', `${String(i % 1000).padStart(3, '0')}Z`)));
const RAW = RECORDS.map((r) => JSON.stringify(r));
const select = compileSelector({ sources: null, minSeverity: 'debug', agents: '*', environments: ['production'], includeContent: false }, { debug: 0.5 });
const observed = new Date().toISOString();
const shapeOpts = { includeContent: true, redact: null };
const builtinScrubber = compileScrubber(null);
const customerScrubber = compileScrubber([
  { id: 'email', pattern: '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}' },
  { id: 'card', pattern: '\\b(?:\\d[ -]?){13,16}\\b' },
  { id: 'order', pattern: 'order [0-9]{6,}', flags: 'i' },
]);
const entries: BatchEntry[] = RECORDS.map((r) => {
  const record = shapeRecord(r, observed, shapeOpts);
  const scrubHits = builtinScrubber.scrubRecord(record);
  return { id: record.id, record, json: JSON.stringify(record), scrubHits };
});
const resource = buildResource(RECORDS[0]!, undefined);
const batch: EncodableBatch = { batchId: '01JBENCH000000000000000000', resource, resourceJson: JSON.stringify(resource), entries };
const ndjsonBody = ndjsonEncoder.encode(batch);
const keys = [signingKey(generateSecret())];
// The transformer's input, built here in setup: only serialisation is timed.
const sdkRecords = sdkLogRecords(batch);

// The batcher with the pipeline's own entries; batches of N records close on size.
const batcherPlan = pipelineFor([drainRow('d_batch')]).plans[0]!;
const batcher = createBatcher({ maxRecords: N, maxBytes: 1 << 30, lingerMs: 60_000, onReady: () => {} });
const routed = RECORDS.map((source, k) => ({ source, resourceKey: resourceKey(source), entry: entries[k]!, bytes: Buffer.byteLength(entries[k]!.json) }));
const noTicket = new Ticket(1, () => {});

// The accountant's write path: one delivery row, one hourly and one usage increment per batch, on PGlite in memory.
const store = await openStore({ dataDir: 'memory://' });
await store.drains.insert(drainRow('d_account'));
// Warnings shown: a failed write would otherwise retry quietly forever.
const accountant = createAccountant({ store, logger: createLogger('warn'), flushIntervalMs: 60_000 });
async function accountBatch(): Promise<void> {
  const startedAt = new Date();
  const done = accountant.record({
    deliveries: [{
      id: ulid(), orgId: 'org_acme', drainId: 'd_account', batchId: ulid(), kind: 'batch', attempt: 1, recordCount: N, bytes: ndjsonBody.length,
      bytesCompressed: Math.round(ndjsonBody.length / 4), latencyMs: 20, ok: true, statusCode: 200, scrubHits: 0, startedAt,
      expiresAt: new Date(startedAt.getTime() + DELIVERY_RETENTION_MS), firstRecordId: entries[0]!.record.id, lastRecordId: entries[N - 1]!.record.id,
    }],
    hourly: [{ drainId: 'd_account', h: hourOf(startedAt.getTime()), delivered: N, dropped: 0, rejected: 0 }],
    usage: [{ drainId: 'd_account', day: dayOf(startedAt.getTime()), events: N, bytes: ndjsonBody.length }],
  });
  await accountant.flush();
  await done;
}

// Pipeline passes: N messages routed to 1 drain, to 10 drains with the same output (shared shaping), and to
// 10 drains each with its own scrub rule (nothing shared), then (the "delivery CPU" cases) each ready batch
// encoded, gzipped and signed as the deliverer does, sharing bodies and gzip where the encoding allows.
const gzip = promisify(gzipCb);
const drains = (n: number, type: 'http' | 'otlp', distinct = false) =>
  Array.from({ length: n }, (_, i) =>
    drainRow(`d${i}`, { type, scrubRules: distinct ? [{ id: `r${i}`, pattern: `secret-${i}-[a-z]+` }] : null }),
  );
const pipelines = {
  one: pipelineFor(drains(1, 'http'), { maxRecords: N, keepAccounting: false }),
  ten: pipelineFor(drains(10, 'http'), { maxRecords: N, keepAccounting: false }),
  tenDistinct: pipelineFor(drains(10, 'http', true), { maxRecords: N, keepAccounting: false }),
  oneOtlp: pipelineFor(drains(1, 'otlp'), { maxRecords: N, keepAccounting: false }),
  tenOtlp: pipelineFor(drains(10, 'otlp'), { maxRecords: N, keepAccounting: false }),
};
const pass = (p: (typeof pipelines)['one']): ReadyBatch[] => {
  p.route(RAW);
  return p.flush();
};
async function deliveryCpu(batches: ReadyBatch[]): Promise<void> {
  for (const b of batches) {
    const plan: DrainPlan = b.plan;
    const batchId = ulid();
    const body = plan.encoder.encode({ batchId, resource: b.resource, resourceJson: b.resourceJson, entries: b.entries });
    await gzipOnce(body, constants.Z_BEST_SPEED, gzip);
    if (plan.signingKeys.length > 0) signBatch(plan.signingKeys, batchId, body);
  }
}

// A fetched record batch of the N records as kafkajs's producer writes it (uncompressed), decoded by
// kafkajs's batch decoder with its own record decoder and with the worker's (kafka-record-decoder.ts).
const kafkaRequire = createRequire(import.meta.url);
const KafkaLong = kafkaRequire('kafkajs/src/utils/long.js') as { fromValue(v: unknown): unknown };
const KafkaDecoder = kafkaRequire('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => unknown;
const kafkaRecord = kafkaRequire('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (r: object) => unknown;
const { RecordBatch } = kafkaRequire('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (o: object) => Promise<{ buffer: Buffer }> };
const fetchedBatch = (
  await RecordBatch({
    firstOffset: KafkaLong.fromValue('18446744'), firstTimestamp: base, maxTimestamp: base + N, lastOffsetDelta: N - 1,
    records: RAW.map((value, k) => kafkaRecord({ offsetDelta: k, timestampDelta: k, key: Buffer.from('org_acme'), value: Buffer.from(value) })),
  })
).buffer;
const kafkajsBatchDecoder = batchDecoderWith(stockRecordDecoder());
const ourBatchDecoder = batchDecoderWith(recordDecoder(KafkaLong as never, kafkaRequire('kafkajs/src/protocol/recordBatch/header/v0/decoder.js') as never));

let i = 0;
const next = () => (i = (i + 1) % RAW.length);
interface Task {
  name: string;
  /** Records one call covers. */
  records: number;
  fn: () => unknown;
}
const tasks: Task[] = [
  { name: 'baseline: JSON.parse', records: 1, fn: () => JSON.parse(RAW[next()]!) },
  { name: 'kafka record batch decode, kafkajs (1000 records)', records: N, fn: () => kafkajsBatchDecoder(new KafkaDecoder(fetchedBatch)) },
  { name: 'kafka record batch decode, kafkajs with the worker\'s record decoder (1000 records)', records: N, fn: () => ourBatchDecoder(new KafkaDecoder(fetchedBatch)) },
  { name: 'decode + validate', records: 1, fn: () => decodeRecord(RAW[next()]!) },
  { name: 'select', records: 1, fn: () => select(RECORDS[next()]!) },
  { name: 'shape', records: 1, fn: () => shapeRecord(RECORDS[next()]!, observed, shapeOpts) },
  { name: 'shape + scrub (built-ins, V8)', records: 1, fn: () => builtinScrubber.scrubRecord(shapeRecord(RECORDS[next()]!, observed, shapeOpts)) },
  { name: 'shape + scrub (built-ins + 3 customer rules, one RE2 alternation)', records: 1, fn: () => customerScrubber.scrubRecord(shapeRecord(RECORDS[next()]!, observed, shapeOpts)) },
  { name: 'record JSON (once per shape group)', records: 1, fn: () => JSON.stringify(entries[next()]!.record) },
  // What the records of a drain encoding from their JSON cost to hold in a batch: their JSON as UTF-8 in slabs.
  {
    name: 'record JSON into slabs, JSON.stringify then written (1000 records)', records: N,
    fn: () => {
      for (const { record } of entries) new SerialisedEntry(record.id, JSON.stringify(record), 0).settle();
    },
  },
  {
    name: 'record JSON into slabs, written by the record writer (1000 records)', records: N,
    fn: () => {
      for (const { record } of entries) SerialisedEntry.written(record, 0);
    },
  },
  {
    name: 'batch (batcher add, batches of 1000)', records: 1,
    fn: () => {
      const k = next();
      batcher.add(batcherPlan, routed[k]!, noTicket);
    },
  },
  // A fresh first entry makes the records text a cache miss: the first drain's cost. The second task is every further drain's.
  { name: 'encode json, first drain (1000-record batch)', records: N, fn: () => jsonEncoder.encode({ ...batch, entries: [{ ...entries[0]! }, ...entries.slice(1)] }) },
  { name: 'encode json, another drain, same records (1000-record batch)', records: N, fn: () => jsonEncoder.encode(batch) },
  { name: 'encode ndjson (1000-record batch)', records: N, fn: () => ndjsonEncoder.encode(batch) },
  { name: 'encode otlp, ours (1000-record batch)', records: N, fn: () => otlpEncoder.encode(batch) },
  { name: 'encode otlp, otlp-transformer 0.223 ProtobufLogsSerializer (1000-record batch)', records: N, fn: () => ProtobufLogsSerializer.serializeRequest(sdkRecords) },
  { name: 'encode vendor-a (1000-record batch)', records: N, fn: () => vendorAEncoder.encode(batch) },
  { name: 'encode vendor-b (1000-record batch)', records: N, fn: () => vendorBEncoder.encode(batch) },
  { name: 'gzip level 1 (1000-record ndjson batch)', records: N, fn: () => gzipSync(ndjsonBody, { level: constants.Z_BEST_SPEED }) },
  {
    name: 'gzip level 1, json body of another drain (records compressed once, head + tail + CRC per drain) (1000-record batch)', records: N,
    fn: () => gzipOnce(jsonEncoder.encode({ ...batch, batchId: ulid() }), constants.Z_BEST_SPEED, gzip),
  },
  { name: 'gzip level 6 (1000-record ndjson batch)', records: N, fn: () => gzipSync(ndjsonBody, { level: 6 }) },
  { name: 'sign (1000-record ndjson batch)', records: N, fn: () => signBatch(keys, batch.batchId, ndjsonBody) },
  { name: 'account (1 delivery row + hourly + usage per 1000-record batch, PGlite in memory)', records: N, fn: accountBatch },
  { name: 'pipeline pass, 1 drain (1000 messages)', records: N, fn: () => pass(pipelines.one) },
  { name: 'pipeline pass, 10 identical drains (1000 messages)', records: N, fn: () => pass(pipelines.ten) },
  { name: 'pipeline pass, 10 drains with distinct scrub rules (1000 messages)', records: N, fn: () => pass(pipelines.tenDistinct) },
  { name: 'pipeline + delivery CPU, 1 json drain (1000 messages)', records: N, fn: () => deliveryCpu(pass(pipelines.one)) },
  { name: 'pipeline + delivery CPU, 10 identical json drains (1000 messages)', records: N, fn: () => deliveryCpu(pass(pipelines.ten)) },
  { name: 'pipeline + delivery CPU, 1 otlp drain (1000 messages)', records: N, fn: () => deliveryCpu(pass(pipelines.oneOtlp)) },
  { name: 'pipeline + delivery CPU, 10 identical otlp drains (1000 messages)', records: N, fn: () => deliveryCpu(pass(pipelines.tenOtlp)) },
];

const bench = new Bench({ time: Number(process.env.BENCH_TIME_MS ?? 500) });
// BENCH_ONLY=<regex> runs a subset (the baseline always runs).
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
const chosen = tasks.filter((t, k) => k === 0 || !only || only.test(t.name));
for (const t of chosen) bench.add(t.name, t.fn);
await bench.run();

// Medians rather than means: these machines are shared, and a neighbour's burst inflates a mean.
const rows = bench.tasks.map((t, k) => {
  const r = t.result as { latency?: { mean: number; p50?: number } } | undefined;
  return { name: t.name, meanUs: ((r?.latency?.mean ?? NaN) * 1000) / chosen[k]!.records, medianUs: ((r?.latency?.p50 ?? NaN) * 1000) / chosen[k]!.records };
});
const baseline = rows[0]!.medianUs;
console.table(rows.map((r) => ({ stage: r.name, 'µs per record (median)': r.medianUs.toFixed(3), 'µs (mean)': r.meanUs.toFixed(3), 'ratio to baseline': (r.medianUs / baseline).toFixed(2) })));

/**
 * Ratios that matter are measured paired: the two sides alternate call by
 * call, so a burst of load on the machine hits both alike; the ratio is of
 * the medians.
 */
async function paired(a: () => unknown, b: () => unknown, rounds: number): Promise<number> {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const [fn, out] of (r % 2 === 0 ? [[a, ta], [b, tb]] : [[b, tb], [a, ta]]) as [() => unknown, number[]][]) {
      const t0 = performance.now();
      await fn();
      out.push(performance.now() - t0);
    }
  }
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[xs.length >> 1]!;
  return median(tb) / median(ta);
}
const byName = (name: string) => tasks.find((t) => t.name === name)!.fn;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const comparisons: Record<string, number> = {};
const pairs: [string, string, string][] = [
  ['recordJsonStringifyOverWriter', 'record JSON into slabs, written by the record writer (1000 records)', 'record JSON into slabs, JSON.stringify then written (1000 records)'],
  ['kafkaRecordDecodeKafkajsOverOurs', 'kafka record batch decode, kafkajs with the worker\'s record decoder (1000 records)', 'kafka record batch decode, kafkajs (1000 records)'],
  ['otlpTransformerOverOurs', 'encode otlp, ours (1000-record batch)', 'encode otlp, otlp-transformer 0.223 ProtobufLogsSerializer (1000-record batch)'],
  ['pipelineTenOverOne', 'pipeline pass, 1 drain (1000 messages)', 'pipeline pass, 10 identical drains (1000 messages)'],
  ['pipelineTenDistinctOverOne', 'pipeline pass, 1 drain (1000 messages)', 'pipeline pass, 10 drains with distinct scrub rules (1000 messages)'],
  ['deliveryCpuTenJsonOverOne', 'pipeline + delivery CPU, 1 json drain (1000 messages)', 'pipeline + delivery CPU, 10 identical json drains (1000 messages)'],
  ['deliveryCpuTenOtlpOverOne', 'pipeline + delivery CPU, 1 otlp drain (1000 messages)', 'pipeline + delivery CPU, 10 identical otlp drains (1000 messages)'],
];
for (const [key, a, b] of pairs) if (!only || (only.test(a) && only.test(b))) comparisons[key] = await paired(byName(a), byName(b), ROUNDS);
console.table(Object.entries(comparisons).map(([k, v]) => ({ comparison: k, 'ratio (paired medians)': v.toFixed(2) })));
batcher.flushAll();
await accountant.stop();
await store.close();
mkdirSync(new URL('./results', import.meta.url), { recursive: true });
const out = {
  when: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  baseline: 'JSON.parse of one record',
  notes: [
    'medianUs and meanUs are per record: per-batch tasks are divided by the 1000 records of the batch; ratioToBaseline uses medians.',
    'comparisons are paired: the two sides alternate call by call (BENCH_ROUNDS rounds), ratio of medians (second over first).',
    'The otlp-transformer input (SDK ReadableLogRecords of the same batch) is built in setup, outside the timed part.',
    'Pipeline passes route 1000 raw messages of one organization and close the batches; "delivery CPU" adds what the deliverer does per batch before the network: encode (new batch id), gzip level 1, sign (http only).',
  ],
  stages: rows.map((r) => ({ ...r, ratioToBaseline: r.medianUs / baseline })),
  comparisons,
};
writeFileSync(new URL('./results/stages.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
