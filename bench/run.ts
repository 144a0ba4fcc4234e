/**
 * Stage micro-benchmarks (tinybench). Figures are reported as ratios to a
 * baseline measured in the same run (JSON.parse of the same record), since
 * these machines are shared and noisy. Results go to bench/results/ with the
 * machine's description. The end-to-end harness comes with issue 7.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { gzipSync, constants } from 'node:zlib';
import { Bench } from 'tinybench';
import { decodeRecord } from '../src/source/record.js';
import { compileSelector } from '../src/select/selector.js';
import { shapeRecord } from '../src/shape/delivered-record.js';
import { jsonEncoder } from '../src/encode/json.js';
import { ndjsonEncoder } from '../src/encode/ndjson.js';
import { buildResource } from '../src/batch/resource.js';
import { signBatch, generateSecret, signingKey } from '../src/sign/standard-webhooks.js';
import { syntheticRecords } from '../src/produce/synthetic.js';

const RECORDS = [...syntheticRecords(1000, { orgs: [{ orgId: 'org_bench', agents: [{ id: 'agt_a', name: 'a' }] }], seed: 42 })];
const RAW = RECORDS.map((r) => JSON.stringify(r));
const select = compileSelector({ sources: null, minSeverity: 'debug', agents: '*', environments: ['production'], includeContent: false }, { debug: 0.5 });
const observed = new Date().toISOString();
const shaped = RECORDS.map((r) => shapeRecord(r, observed, { includeContent: false, redact: null }));
const resource = buildResource(RECORDS[0]!, undefined);
const batch = { batchId: '01JBENCH000000000000000000', resource, resourceJson: JSON.stringify(resource), entries: shaped.map((record) => ({ record, json: JSON.stringify(record), scrubHits: 0 })) };
const ndjsonBody = ndjsonEncoder.encode(batch);
const keys = [signingKey(generateSecret())];

let i = 0;
const next = () => (i = (i + 1) % RAW.length);
const bench = new Bench({ time: 500 });
bench
  .add('baseline: JSON.parse (per record)', () => void JSON.parse(RAW[next()]!))
  .add('decode + validate (per record)', () => void decodeRecord(RAW[next()]!))
  .add('select (per record)', () => void select(RECORDS[next()]!))
  .add('shape (per record)', () => void shapeRecord(RECORDS[next()]!, observed, { includeContent: false, redact: null }))
  .add('json encode (1000-record batch)', () => void jsonEncoder.encode(batch))
  .add('ndjson encode (1000-record batch)', () => void ndjsonEncoder.encode(batch))
  .add('gzip level 1 (1000-record ndjson batch)', () => void gzipSync(ndjsonBody, { level: constants.Z_BEST_SPEED }))
  .add('sign (1000-record ndjson batch)', () => void signBatch(keys, batch.batchId, ndjsonBody));

await bench.run();
const rows = bench.tasks.map((t) => {
  const r = t.result as { latency?: { mean: number }; mean?: number } | undefined;
  const meanMs = r?.latency?.mean ?? r?.mean ?? NaN;
  const perBatch = t.name.includes('1000-record');
  return { name: t.name, meanUs: (meanMs * 1000) / (perBatch ? RECORDS.length : 1) };
});
const baseline = rows[0]!.meanUs;
console.table(rows.map((r) => ({ stage: r.name, 'µs per record': r.meanUs.toFixed(3), 'ratio to baseline': (r.meanUs / baseline).toFixed(2) })));
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const out = {
  when: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  baseline: 'JSON.parse of one record',
  stages: rows.map((r) => ({ ...r, ratioToBaseline: r.meanUs / baseline })),
};
writeFileSync(new URL('./results/stages.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
