/**
 * The `logdrain worker` operator listener on METRICS_PORT: /metrics, /healthz
 * and /readyz. It opens as soon as the store is up, before the consumer has
 * joined its group (which can take a session timeout after a rebalance), so a
 * liveness probe never kills a worker that is only waiting to join and the
 * metrics see the start. The answers match the API's (src/api/server.ts).
 */
import { createServer } from 'node:http';
import type { Metrics } from './metrics.js';

export interface WorkerListenerOptions {
  host: string;
  port: number;
  metrics: Metrics;
  /** Whether the store answers. */
  storeUp(): Promise<boolean>;
  /** Whether the worker runs and its consumer has joined the group (false while starting). */
  consumerJoined(): boolean;
  shuttingDown(): boolean;
}

export interface WorkerListener {
  port: number;
  close(): Promise<void>;
}

export async function openWorkerListener(opts: WorkerListenerOptions): Promise<WorkerListener> {
  const json = { 'content-type': 'application/json' };
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      void opts.metrics.scrape().then(
        (text) => res.writeHead(200, { 'content-type': opts.metrics.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else if (req.url === '/healthz') res.writeHead(200, json).end('{"status":"ok"}');
    else if (req.url === '/readyz') {
      void opts.storeUp().catch(() => false).then((store) => {
        const checks = { store, consumer: opts.consumerJoined(), shuttingDown: opts.shuttingDown() };
        const ready = checks.store && checks.consumer && !checks.shuttingDown;
        res.writeHead(ready ? 200 : 503, json).end(JSON.stringify({ status: ready ? 'ready' : 'not_ready', checks }));
      });
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
