/**
 * The benchmark's destination: HTTPS on loopback with a self-signed
 * certificate, answering 200 at once (and echoing verification challenges).
 * It keeps each request's raw body and arrival time and counts records as
 * they come (gunzip + line count for NDJSON, a protobuf decode for OTLP), so
 * the harness knows when a run is complete; record ids and latencies are
 * decoded afterwards, off the clock.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { ensureSelfSignedCertificate } from '../../src/devtools/self-signed.js';
import { decodeExportLogsRequest } from '../../test/helpers/otlp-decoder.js';

export interface Arrival {
  path: string;
  at: number;
  raw: Buffer;
  gzip: boolean;
  protobuf: boolean;
  records: number;
  /** The batch was a drain replay's (it carried `Logdrain-Replay`). */
  replay: boolean;
}

export interface DecodedRecord {
  id: string;
  timestamp: string;
  at: number;
  orgId: string | undefined;
}

export function bodyOf(a: Arrival): Buffer {
  return a.gzip ? gunzipSync(a.raw) : a.raw;
}

/** Record ids and times of one arrival, whatever its encoding. */
export function decodeArrival(a: Arrival): DecodedRecord[] {
  const body = bodyOf(a);
  if (a.protobuf) {
    const msg = decodeExportLogsRequest(body);
    const out: DecodedRecord[] = [];
    for (const rl of msg.resourceLogs ?? []) {
      const org = (rl.resource?.attributes ?? []).find((kv: { key: string }) => kv.key === 'svc.org.id')?.value?.stringValue;
      for (const sl of rl.scopeLogs ?? []) {
        for (const lr of sl.logRecords ?? []) {
          const attrs = lr.attributes ?? [];
          const id = attrs.find((kv: { key: string }) => kv.key === 'svc.record.id' || kv.key === 'log.record.uid')?.value?.stringValue ?? '';
          const ns = BigInt(lr.timeUnixNano ?? '0');
          out.push({ id, timestamp: new Date(Number(ns / 1_000_000n)).toISOString(), at: a.at, orgId: org });
        }
      }
    }
    return out;
  }
  const text = body.toString('utf8');
  if (text.startsWith('{"')) {
    // A JSON batch ({records: [...]}) or an NDJSON line stream.
    try {
      const batch = JSON.parse(text) as { records?: { id: string; timestamp: string }[]; resource?: Record<string, string> };
      if (Array.isArray(batch.records)) return batch.records.map((r) => ({ id: r.id, timestamp: r.timestamp, at: a.at, orgId: batch.resource?.['svc.org.id'] }));
    } catch {
      /* NDJSON */
    }
  }
  return text.split('\n').filter((l) => l.length > 0).map((l) => {
    const r = JSON.parse(l) as { id: string; timestamp: string; orgId?: string; resource?: Record<string, string> };
    return { id: r.id, timestamp: r.timestamp, at: a.at, orgId: r.orgId ?? r.resource?.['svc.org.id'] };
  });
}

function countRecords(raw: Buffer, gzip: boolean, protobuf: boolean): number {
  const body = gzip ? gunzipSync(raw) : raw;
  if (protobuf) {
    let n = 0;
    for (const rl of decodeExportLogsRequest(body).resourceLogs ?? []) for (const sl of rl.scopeLogs ?? []) n += (sl.logRecords ?? []).length;
    return n;
  }
  if (body[0] === 0x7b && body.indexOf('"records":[') !== -1 && body.indexOf('\n') === -1) {
    return (JSON.parse(body.toString('utf8')) as { records: unknown[] }).records.length;
  }
  let n = 0;
  for (let i = body.indexOf(10); i !== -1; i = body.indexOf(10, i + 1)) n++;
  if (body.length > 0 && body[body.length - 1] !== 10) n++;
  return n;
}

export interface BenchReceiver {
  url: string;
  caPath: string;
  /** Records received on paths starting with `prefix` since the last `take`. */
  count(prefix: string): number;
  bytes(prefix: string): number;
  /** Arrivals so far (for a prefix), cleared. */
  take(prefix: string): Arrival[];
  close(): Promise<void>;
}

/**
 * A self-signed HTTPS server on loopback that answers drain verifications
 * (echoing `X-Svc-Verify`) and hands every other request's whole body to `onBody`.
 */
export async function startLoopbackReceiver(
  certDir: string,
  onBody: (req: IncomingMessage, res: ServerResponse, raw: Buffer) => void,
): Promise<{ server: Server; url: string; caPath: string }> {
  const pair = ensureSelfSignedCertificate(certDir);
  const server: Server = createServer({ cert: pair.cert, key: pair.key, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const verify = req.headers['x-svc-verify'];
      if (typeof verify === 'string') res.writeHead(200, { 'content-type': 'text/plain' }).end(verify);
      else onBody(req, res, Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `https://localhost:${(server.address() as AddressInfo).port}`, caPath: pair.certPath };
}

export async function startBenchReceiver(certDir: string): Promise<BenchReceiver> {
  let arrivals: Arrival[] = [];
  const counts = new Map<string, { records: number; bytes: number }>();
  const { server, url, caPath } = await startLoopbackReceiver(certDir, (req, res, raw) => {
    const gzip = req.headers['content-encoding'] === 'gzip';
    const protobuf = String(req.headers['content-type'] ?? '').includes('protobuf');
    const path = req.url ?? '/';
    let records = 0;
    try {
      records = countRecords(raw, gzip, protobuf);
    } catch {
      res.writeHead(400).end();
      return;
    }
    arrivals.push({ path, at: Date.now(), raw, gzip, protobuf, records, replay: req.headers['logdrain-replay'] !== undefined });
    const top = `/${path.split('/')[1] ?? ''}`;
    const c = counts.get(top) ?? { records: 0, bytes: 0 };
    c.records += records;
    c.bytes += raw.length;
    counts.set(top, c);
    if (protobuf) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  return {
    url,
    caPath,
    count: (prefix) => counts.get(prefix)?.records ?? 0,
    bytes: (prefix) => counts.get(prefix)?.bytes ?? 0,
    take(prefix) {
      const mine = arrivals.filter((a) => a.path.startsWith(prefix));
      arrivals = arrivals.filter((a) => !a.path.startsWith(prefix));
      counts.delete(prefix);
      return mine;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
