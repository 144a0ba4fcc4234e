/**
 * The API's request log: one `debug` line per request (method, route template, status, time), and
 * once a minute one `info` line summing them up, so an `info` log shows the notable events instead
 * of two lines for every request. Only route templates are logged, never a raw URL (ids, queries).
 */
import type { Logger } from './logger.js';

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

export interface RequestSummary {
  record(method: string, route: string, status: number, ms: number): void;
  /** Logs what was counted since the last line (nothing when nothing was), and starts again. */
  flush(): void;
  stop(): void;
}

export function createRequestSummary(logger: Logger, intervalMs = 60_000): RequestSummary {
  let counts = new Map<string, number>();
  let total = 0;
  let slowest = { ms: 0, route: '' };
  const flush = () => {
    if (total === 0) return;
    const byStatus = Object.fromEntries(STATUS_CLASSES.map((c) => [c, counts.get(c) ?? 0]).filter(([, n]) => n !== 0));
    logger.info(
      { event: 'api.requests', requests: total, byStatus, slowestMs: Math.round(slowest.ms), slowestRoute: slowest.route, periodSeconds: Math.round(intervalMs / 1000) },
      `${total} requests in the last ${Math.round(intervalMs / 1000)} s (${Object.entries(byStatus).map(([c, n]) => `${n} ${c}`).join(', ')})`,
    );
    counts = new Map();
    total = 0;
    slowest = { ms: 0, route: '' };
  };
  // Every request passes here: the debug line is built only when it is written.
  const debug = logger.isLevelEnabled('debug');
  const timer = setInterval(flush, intervalMs);
  timer.unref();
  return {
    record(method, route, status, ms) {
      if (debug) logger.debug({ event: 'api.request', method, route, status, ms: Math.round(ms * 10) / 10 }, `${method} ${route} ${status}`);
      const cls = STATUS_CLASSES[Math.min(4, Math.max(0, Math.floor(status / 100) - 1))]!;
      counts.set(cls, (counts.get(cls) ?? 0) + 1);
      total++;
      if (ms > slowest.ms) slowest = { ms, route: `${method} ${route}` };
    },
    flush,
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}
