/**
 * The worker's CPU building the platform copy's COPY rows, in process (`node --import tsx
 * bench/platform-copy/rows.ts`): 100,000 decoded records of bench:platform-copy's data set, rows
 * built and packed in chunks of 500 (as the pipeline does a chunk of messages), COPY's text format
 * (logs/repository.ts copyRow, packRows) and binary format (binary-rows.ts) alternating, seven
 * rounds each after three to warm up. Decoding is not counted, nor the binary rows' `ascii` flag
 * (decodeRecord could give it for nothing: a text without escapes as long as its bytes). Prints
 * CPU µs a row, each round.
 */
import { syntheticRecords } from '../../src/devtools/synthetic.js';
import { decodeRecord } from '../../src/model/record.js';
import { copyRow, packRows } from '../../src/modules/logs/repository.js';
import { ORGS } from '../e2e/harness.js';
import { asciiRecord, binaryRow, packBinary } from './binary-rows.js';

const N = 100_000;
const CHUNK = 500;
const decoded = [...syntheticRecords(N, { orgs: ORGS, idPrefix: 'pc', seed: 2026 })].map((r) => {
  const raw = Buffer.from(JSON.stringify(r));
  const d = decodeRecord(raw);
  if (!d.ok) throw new Error(d.reason);
  return { record: d.record, timeMs: d.timeMs, plain: d.plain, ascii: asciiRecord(raw, d.plain) };
});
let sink = 0;
const text = () => {
  for (let i = 0; i < N; i += CHUNK) sink += packRows(decoded.slice(i, i + CHUNK).map((d) => copyRow(d.record, d.timeMs, d.plain))).length;
};
const binary = () => {
  for (let i = 0; i < N; i += CHUNK) sink += packBinary(decoded.slice(i, i + CHUNK).map((d) => binaryRow(d.record, d.timeMs, d.ascii))).length;
};
const µsARow = (f: () => void): string => {
  const t0 = process.cpuUsage();
  f();
  const t = process.cpuUsage(t0);
  return ((t.user + t.system) / N).toFixed(2);
};
for (let i = 0; i < 3; i++) (text(), binary());
const out = { text: [] as string[], binary: [] as string[] };
for (let i = 0; i < 7; i++) (out.text.push(µsARow(text)), out.binary.push(µsARow(binary)));
console.log(`CPU µs a row, rounds alternating: text ${out.text.join(', ')}; binary ${out.binary.join(', ')} (${sink} rows)`);
