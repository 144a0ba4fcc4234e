/**
 * The `logdrain worker` operator listener on METRICS_PORT: /metrics, /healthz
 * and /readyz. It opens first, before the store and before the consumer has
 * joined its group (which can take a session timeout after a rebalance), so a
 * liveness probe never kills a worker that is only waiting to join and the
 * metrics see the start: /readyz answers 503 (store or consumer false) until
 * both are up. The answers match the API's (src/server.ts).
 */
import type { Metrics } from './metrics.js';
import { openHttpListener, type HttpListener } from '../commands/http-listener.js';

export interface WorkerListenerOptions {
  host: string;
  port: number;
  metrics: Metrics;
  /** Whether the store answers. */
  storeUp(): Promise<boolean>;
  /** Whether the worker runs and its consumer has joined the group (false while starting). */
  consumerJoined(): boolean;
  shuttingDown(): boolean;
  /** An error of the listening socket, reported rather than thrown. */
  onError(err: Error): void;
}

/**
 * Its answers take a store query at most: a connection still open this long after closing began
 * (at the end of the worker's stop) is cut, leaving the stop its time.
 */
export const WORKER_LISTENER_GRACE_MS = 1000;

export async function openWorkerListener(opts: WorkerListenerOptions): Promise<HttpListener> {
  const json = { 'content-type': 'application/json' };
  return openHttpListener({
    host: opts.host,
    port: opts.port,
    graceMs: WORKER_LISTENER_GRACE_MS,
    onError: opts.onError,
    handler(req, res) {
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
    },
  });
}
