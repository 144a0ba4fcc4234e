/**
 * The ingest load of bench/ingest-isolation.ts, run as a child process so that building and
 * sending the bodies does not share an event loop with the probes that measure the API. argv[2]
 * is a JSON `IngestLoadSpec`; `concurrency` loops each post one body after another until
 * `seconds` have passed; one JSON `IngestLoadResult` line is written to stdout.
 *
 * Every body holds `records` records of about `recordBytes` bytes each (their `message` makes up
 * the size), with ids no other body of the run shares.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

export interface IngestLoadSpec {
  url: string;
  token: string;
  orgId: string;
  agentId: string;
  agentName: string;
  concurrency: number;
  seconds: number;
  records: number;
  recordBytes: number;
}

export interface IngestLoadResult {
  requests: number;
  bodyBytes: number;
  statusCodes: Record<string, number>;
  accepted: number;
  rejected: number;
  errors: string[];
  latencyMs: { p50: number; max: number };
  seconds: number;
}

const spec = JSON.parse(process.argv[2]!) as IngestLoadSpec;
const base = {
  orgId: spec.orgId, agentId: spec.agentId, agentName: spec.agentName,
  environment: 'production', source: 'mcp', event: 'call', severity: 'info', executionId: 'exe-bench',
};
// The record's text without its message; the message fills it up to recordBytes.
const skeletonBytes = Buffer.byteLength(JSON.stringify({ ...base, id: 'rec-000000-000', timestamp: new Date().toISOString(), message: '' }));
const message = 'x'.repeat(Math.max(0, spec.recordBytes - skeletonBytes));
let bodySeq = 0;

function body(): string {
  const b = bodySeq++;
  const timestamp = new Date().toISOString();
  const parts: string[] = [];
  for (let i = 0; i < spec.records; i++) {
    parts.push(JSON.stringify({ ...base, id: `rec-${String(b).padStart(6, '0')}-${String(i).padStart(3, '0')}`, timestamp, message }));
  }
  return `[${parts.join(',')}]`;
}

const dispatcher = new Agent({ connections: spec.concurrency, headersTimeout: 600_000, bodyTimeout: 600_000 });
const statusCodes: Record<string, number> = {};
const latencies: number[] = [];
const errors: string[] = [];
let accepted = 0;
let rejected = 0;
let bodyBytes = 0;
const started = performance.now();
const until = started + spec.seconds * 1000;

async function loop(): Promise<void> {
  while (performance.now() < until) {
    const text = body();
    bodyBytes = Buffer.byteLength(text);
    const t0 = performance.now();
    try {
      const res = await request(spec.url, {
        method: 'POST', dispatcher, body: text,
        headers: { authorization: `Bearer ${spec.token}`, 'content-type': 'application/json' },
      });
      const answer = await res.body.text();
      latencies.push(performance.now() - t0);
      statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1;
      if (res.statusCode === 202) {
        const a = JSON.parse(answer) as { accepted: number; rejected: unknown[] };
        accepted += a.accepted;
        rejected += a.rejected.length;
      } else if (errors.length < 5) {
        errors.push(`${res.statusCode} ${answer.slice(0, 300)}`);
      }
    } catch (e) {
      if (errors.length < 5) errors.push((e as Error).message);
    }
  }
}

// The benchmark starts its probes on this line: the load is on from here.
process.stdout.write(JSON.stringify({ started: true }) + '\n');
await Promise.all(Array.from({ length: spec.concurrency }, loop));
await dispatcher.close();
latencies.sort((a, b) => a - b);
const result: IngestLoadResult = {
  requests: latencies.length,
  bodyBytes,
  statusCodes,
  accepted,
  rejected,
  errors,
  latencyMs: { p50: latencies[Math.floor(latencies.length / 2)] ?? NaN, max: latencies[latencies.length - 1] ?? NaN },
  seconds: (performance.now() - started) / 1000,
};
process.stdout.write(JSON.stringify(result) + '\n');
