/**
 * The REST layer: fastify with the route families, the error shapes of spec
 * 01 part 7, and the operator endpoints (/healthz, /readyz, /metrics).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import type { Transport } from '../deliver/transport.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { installErrorHandler } from './kernel/errors.js';
import swagger from '@fastify/swagger';
import { drainsFamily } from '../modules/drains/index.js';
import { createRateLimiter } from './kernel/rate-limit.js';
import { createAccountant } from '../account/accountant.js';
import { createDeliverer } from '../deliver/deliverer.js';
import { ingestFamily, type RecordSink } from '../modules/ingest/records.js';
import { logsFamily } from '../modules/logs/index.js';
import { registerFamily } from './kernel/family.js';
import { installAccess } from './kernel/access.js';

export interface ApiOptions {
  config: Config;
  store: Store;
  transport: Transport;
  logger: Logger;
  metrics: Metrics;
  sink: RecordSink;
  /** Extra readiness conditions (the worker's consumer in `start`). */
  ready?: () => boolean;
  /**
   * A server already listening (bound before the store was opened, commands/run.ts): the API takes
   * its requests over once ready, instead of listening itself.
   */
  server?: Server;
}

export async function buildApi(opts: ApiOptions): Promise<FastifyInstance> {
  const bound = opts.server;
  const app: FastifyInstance = Fastify({
    loggerInstance: opts.logger.child({ component: 'api' }) as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    requestTimeout: opts.config.requestTimeoutMs,
    http: httpLimits(opts.config.requestTimeoutMs),
    // A server bound before the store was opened (commands/run.ts) was made with httpLimits too.
    ...(bound ? { serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) => takeOver(bound, handler) } : {}),
  });
  let shuttingDown = false;
  app.addHook('onClose', async () => {
    shuttingDown = true;
  });
  installErrorHandler(app);
  // Request metrics by route template (bounded), never by raw URL.
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    opts.metrics.httpRequest(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  // Route schemas document; the route code validates (answering the spec's codes per rule) and
  // serialises, so neither the schema validator nor the response serialiser may alter a request or answer.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'logdrain', version: '0.1.0', description: 'Log drain administration and ingestion (spec 01).' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  // Every route below declares its access; the kernel enforces it (kernel/access.ts).
  const limiter = createRateLimiter(opts.store, { syncMs: opts.config.rateLimitSyncMs });
  installAccess(app, { store: opts.store, limiter, deprecatedScopesSunset: opts.config.deprecatedScopesSunset });
  const open = { config: { access: { resource: 'public' as const } } };
  app.get('/docs/openapi.json', { schema: { hide: true }, ...open }, async () => app.swagger());

  app.get('/healthz', open, async () => ({ status: 'ok' }));
  app.get('/readyz', open, async (_req, reply) => {
    const checks = {
      store: await opts.store.ping(),
      consumer: opts.ready ? opts.ready() : true,
      accounting: accountant.healthy(),
      shuttingDown,
    };
    const ready = checks.store && checks.consumer && checks.accounting && !shuttingDown;
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
  app.get('/metrics', open, async (_req, reply) =>
    reply.header('content-type', opts.metrics.registry.contentType).send(await opts.metrics.scrape()),
  );

  // Test batches go through the same delivery path as the worker's, with their own accounting.
  const accountant = createAccountant({ store: opts.store, logger: opts.logger });
  const deliverer = createDeliverer({
    transport: opts.transport, accountant, events: opts.metrics.events, logger: opts.logger,
    retry: opts.config.retry, bufferHorizonMs: opts.config.bufferHorizonMs,
  });
  app.addHook('onClose', async () => {
    deliverer.abandonRetries();
    await accountant.stop();
  });
  // The route families, one line each.
  await registerFamily(app, drainsFamily, { ...opts, deliverer, limiter });
  await registerFamily(app, logsFamily, { config: opts.config, store: opts.store, limiter });
  await registerFamily(app, ingestFamily, { store: opts.store, sink: opts.sink });
  return app;
}

/** The listening server's interim answer (503, starting) replaced by the API's handler. */
function takeOver(server: Server, handler: (req: IncomingMessage, res: ServerResponse) => void): Server {
  server.removeAllListeners('request');
  server.on('request', handler);
  return server;
}

/**
 * The API server's time limits. A request must arrive whole within `requestTimeoutMs`: a body
 * trickled a byte at a time would otherwise hold its socket (and descriptor) for ever. Node checks
 * it every connectionsCheckingInterval, and enforces it only when headersTimeout is not longer.
 */
export function httpLimits(requestTimeoutMs: number): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  return {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(60_000, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestTimeoutMs / 4))),
  };
}
