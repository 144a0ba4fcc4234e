/**
 * The REST layer: fastify with the route families, the error shapes of spec
 * 01 part 7, and the operator endpoints (/healthz, /readyz, /metrics).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import type { Transport } from '../deliver/transport.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { installErrorHandler } from './errors.js';
import { registerDrainRoutes } from './routes/drains/routes.js';
import { registerRecordRoutes, type RecordSink } from './routes/internal/records.js';

export interface ApiOptions {
  config: Config;
  store: Store;
  transport: Transport;
  logger: Logger;
  metrics: Metrics;
  sink: RecordSink;
  /** Extra readiness conditions (the worker's consumer in `start`). */
  ready?: () => boolean;
}

export async function buildApi(opts: ApiOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: opts.logger.child({ component: 'api' }) as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    trustProxy: false,
  });
  let shuttingDown = false;
  app.addHook('onClose', async () => {
    shuttingDown = true;
  });
  installErrorHandler(app);

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const checks = {
      store: await opts.store.ping(),
      consumer: opts.ready ? opts.ready() : true,
      shuttingDown,
    };
    const ready = checks.store && checks.consumer && !shuttingDown;
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
  app.get('/metrics', async (_req, reply) =>
    reply.header('content-type', opts.metrics.registry.contentType).send(await opts.metrics.registry.metrics()),
  );

  registerDrainRoutes(app, opts);
  registerRecordRoutes(app, { store: opts.store, sink: opts.sink });
  return app;
}
