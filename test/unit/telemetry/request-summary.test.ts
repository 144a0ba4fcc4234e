/** The API's request log: a debug line per request, an info summary per period, no raw URLs. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/telemetry/logger.js';
import { createRequestSummary } from '../../../src/telemetry/request-summary.js';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, 'test', { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { logger, lines };
}

describe('request summary', () => {
  afterEach(() => vi.useRealTimers());

  it('logs one info line per period with the counts by status class and the slowest route, and nothing per request at info', () => {
    vi.useFakeTimers();
    const { logger, lines } = capture('info');
    const summary = createRequestSummary(logger, 60_000);
    summary.record('GET', '/admin/orgs/:orgId/log-drains', 200, 4.2);
    summary.record('POST', '/admin/orgs/:orgId/log-drains', 201, 12.5);
    summary.record('GET', '/admin/orgs/:orgId/log-drains/:drainId', 404, 2);
    summary.record('GET', '/healthz', 503, 0.3);
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30, event: 'api.requests', requests: 4, byStatus: { '2xx': 2, '4xx': 1, '5xx': 1 }, slowestMs: 13, slowestRoute: 'POST /admin/orgs/:orgId/log-drains',
    });
    // A quiet period logs nothing; counting starts again after each line.
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(1);
    summary.record('GET', '/healthz', 200, 1);
    summary.stop();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ requests: 1, byStatus: { '2xx': 1 } });
  });

  it('logs each request at debug by its route template', () => {
    const { logger, lines } = capture('debug');
    const summary = createRequestSummary(logger, 60_000);
    summary.record('DELETE', '/admin/orgs/:orgId/log-drains/:drainId', 204, 3.14159);
    summary.stop();
    expect(lines[0]).toMatchObject({ level: 20, event: 'api.request', method: 'DELETE', route: '/admin/orgs/:orgId/log-drains/:drainId', status: 204, ms: 3.1 });
  });
});
