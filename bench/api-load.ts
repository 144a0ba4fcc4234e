/**
 * The load generator of `npm run bench:api` (bench/api.ts), run as a child process so that it
 * does not share the event loop of the API it measures. One scenario per run: argv[2] is a JSON
 * `LoadSpec`; one JSON `LoadResult` line is written to stdout.
 *
 * autocannon drives the connections. Besides autocannon's own latency histogram (whole
 * milliseconds, and with `overallRate` its coordinated-omission correction), every response's
 * time is recorded here as autocannon measured it (process.hrtime, fractions of a millisecond),
 * whatever its status, and the percentiles are taken from those raw values.
 */
import { createRequire } from 'node:module';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /**
   * Each request's body is `body` with every `{{seq}}` replaced by a number no other request of this
   * process gets (`<pid><n>`): for routes that refuse a repeated body (a version pushed twice).
   */
  uniqueBody?: boolean;
  /**
   * Each request comes from an address of its own as a trusted proxy forwards it
   * (`X-Forwarded-For`, 65,536 addresses in turn): for routes with per-address budgets (the
   * template catalog's), which a benchmark from one address would spend in its first second.
   */
  uniqueAddress?: boolean;
  connections: number;
  seconds: number;
  /** Seconds of the same load first, not measured. */
  warmupSeconds: number;
  /** Requests a second over all connections (autocannon `overallRate`); unset: as fast as answered. */
  overallRate?: number;
}

export interface LoadResult {
  responses: number;
  seconds: number;
  requestsPerSecond: number;
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Raw response times (ms). */
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** autocannon's own histogram (whole ms; with a rate, corrected for coordinated omission). */
  autocannonLatencyMs: { p50: number; p99: number; mean: number };
  autocannonRequestsPerSecondMean: number;
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  statusCodeStats: Record<string, { count: number }>;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
interface AutocannonInstance {
  on(event: 'response', fn: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): void;
}
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, result: AutocannonResult) => void) => AutocannonInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

let sequence = 0;

/** A request's own body (`uniqueBody`) and address (`uniqueAddress`). */
function perRequest(spec: LoadSpec, req: Record<string, unknown>): Record<string, unknown> {
  const n = ++sequence;
  const out: Record<string, unknown> = { ...req };
  if (spec.uniqueBody && spec.body !== undefined) out.body = spec.body.replaceAll('{{seq}}', `${process.pid}${n}`);
  if (spec.uniqueAddress) {
    const a = n % 65_536;
    out.headers = { ...(req.headers as Record<string, string> | undefined), 'x-forwarded-for': `10.${a >> 8}.${a & 255}.${1 + (n % 250)}` };
  }
  return out;
}

function once(spec: LoadSpec, seconds: number, record?: (ms: number) => void): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: spec.url,
      method: spec.method,
      headers: spec.headers,
      ...(spec.body !== undefined && !spec.uniqueBody ? { body: spec.body } : {}),
      ...(spec.uniqueBody || spec.uniqueAddress
        ? { requests: [{ setupRequest: (req: Record<string, unknown>) => perRequest(spec, req) }] }
        : {}),
      connections: spec.connections,
      duration: seconds,
      ...(spec.overallRate !== undefined ? { overallRate: spec.overallRate } : {}),
      timeout: 10,
    }, (err, result) => (err ? reject(err) : resolve(result)));
    if (record) instance.on('response', (_client, _status, _bytes, ms) => record(ms));
  });
}

const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
if (spec.warmupSeconds > 0) await once(spec, spec.warmupSeconds);

const times: number[] = [];
const started = performance.now();
const r = await once(spec, spec.seconds, (ms) => times.push(ms));
const elapsed = (performance.now() - started) / 1000;
const sorted = Float64Array.from(times).sort();
const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count]));
const result: LoadResult = {
  responses: times.length,
  seconds: elapsed,
  requestsPerSecond: times.length / elapsed,
  statusCodes,
  non2xx: r.non2xx,
  errors: r.errors,
  timeouts: r.timeouts,
  latencyMs: {
    p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), p99: quantile(sorted, 0.99),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
    mean: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length),
  },
  autocannonLatencyMs: { p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.average },
  autocannonRequestsPerSecondMean: r.requests.average,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
