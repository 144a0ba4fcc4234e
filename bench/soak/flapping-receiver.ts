/**
 * The soak's destination: HTTPS on loopback (self-signed), echoing verification challenges, whose
 * answer to batches follows a mode the harness flips: `ok` (200), `error` (500) or `hang` (never
 * answers; the delivery times out). It keeps no bodies: each accepted NDJSON batch is decoded on
 * arrival into a count per record id for its path, and checked for tenancy (every line's resource
 * names the organization the path belongs to), so ten minutes of traffic cost a map of ids.
 */
import type { ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startLoopbackReceiver } from '../e2e/receiver.js';

export type Mode = 'ok' | 'error' | 'hang';

export interface FlappingReceiver {
  url: string;
  caPath: string;
  setMode(mode: Mode): void;
  /** Record ids answered 2xx on `path`, with how often each arrived. */
  received(path: string): ReadonlyMap<string, number>;
  /** Requests answered so far, by answer. */
  answers: Record<Mode, number>;
  /** Batches whose resource (or a record's organization) did not match the organization of their path. */
  tenancyViolations: string[];
  close(): Promise<void>;
}

/** `pathOrg(path)` names the organization whose drain posts to `path`. */
export async function startFlappingReceiver(certDir: string, pathOrg: (path: string) => string | undefined): Promise<FlappingReceiver> {
  let mode: Mode = 'ok';
  const hung = new Set<ServerResponse>();
  const byPath = new Map<string, Map<string, number>>();
  const answers: Record<Mode, number> = { ok: 0, error: 0, hang: 0 };
  const tenancyViolations: string[] = [];

  const accept = (path: string, raw: Buffer, gzip: boolean): void => {
    const text = (gzip ? gunzipSync(raw) : raw).toString('utf8');
    const org = pathOrg(path);
    const counts = byPath.get(path) ?? new Map<string, number>();
    byPath.set(path, counts);
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      const rec = JSON.parse(line) as { id: string; eventName?: string; resource?: Record<string, string> };
      if (rec.eventName === 'svc.drain.heartbeat') continue;
      const ns = rec.resource?.['service.namespace'];
      const orgId = rec.resource?.['svc.org.id'];
      if (org === undefined || ns !== org || orgId !== org) tenancyViolations.push(`${path}: record ${rec.id} of ${orgId}/${ns}`);
      counts.set(rec.id, (counts.get(rec.id) ?? 0) + 1);
    }
  };

  const { server, url, caPath } = await startLoopbackReceiver(certDir, (req, res, raw) => {
    const current = mode;
    answers[current]++;
    if (current === 'hang') {
      hung.add(res);
      res.on('close', () => hung.delete(res));
      return;
    }
    if (current === 'error') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('flapping');
      return;
    }
    try {
      accept(req.url ?? '/', raw, req.headers['content-encoding'] === 'gzip');
    } catch {
      res.writeHead(400).end('undecodable batch');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  return {
    url,
    caPath,
    answers,
    tenancyViolations,
    setMode(next) {
      mode = next;
      // Requests held while hanging are cut when the mode changes (the client has timed out by then).
      if (next !== 'hang') for (const res of hung) res.destroy();
    },
    received: (path) => byPath.get(path) ?? new Map(),
    close: () =>
      new Promise((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
