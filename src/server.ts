/**
 * The REST layer: fastify with the route families, the error shapes of spec
 * 01 part 7, and the operator endpoints (/healthz, /readyz, /metrics).
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import type { Server } from 'node:http';
import type { Config } from './config/config.js';
import type { Store } from './store/store.js';
import type { Logger } from './telemetry/logger.js';
import { createRequestSummary } from './telemetry/request-summary.js';
import { buildInfo } from './config/build-info.js';
import type { Metrics } from './telemetry/metrics.js';
import { installErrorHandler } from './api/kernel/errors.js';
import { installStoreOutage } from './api/kernel/store-outage.js';
import { installJsonBody } from './api/kernel/json-body.js';
import { closeOnUnreadBody } from './api/kernel/unread-body.js';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { createRateLimiter } from './api/kernel/rate-limit.js';
import type { RecordSink } from './source/sink.js';
import { createChannelNotifications, createTemplatePorts, families, type PlatformDeps } from './modules/index.js';
import { registerFamily } from './api/kernel/family.js';
import { createReadCaches } from './api/kernel/read-cache.js';
import { installAccess } from './api/kernel/access.js';
import { documentedSchema, installSchemas } from './api/kernel/schema.js';
import { installStorableText } from './api/kernel/storable-text.js';
import { operatorSchemas } from './api/operator-schemas.js';
import { createVendors } from './vendors/index.js';
import { registerHealthPage } from './api/health-page.js';
import { httpLimits } from './api/http-limits.js';

export interface ApiOptions {
  config: Config;
  store: Store;
  logger: Logger;
  metrics: Metrics;
  sink: RecordSink;
  /**
   * The worker running in this process (`start`), whose readiness is the process's too: its
   * consumer and its accounting. An API alone (`serve`) sends and accounts nothing, so it has no
   * accounting to report.
   */
  worker?: WorkerReadiness;
  /**
   * A server already listening (bound before the store was opened, commands/run.ts), built on
   * instead of listening (its client-error answers are the API's). The API answers none of its
   * requests: its owner hands them over (`app.routing`) once `app.ready()` has resolved, since a
   * request reaching a route before that finds its hooks not compiled and fastify throws.
   */
  server?: Server;
  /** Told of every route as it is registered, before the kernel adds to it (the OpenAPI test lists them so). */
  onRoute?: (route: RouteOptions) => void;
  /** How often the request summary is logged at info (default a minute). */
  requestSummaryMs?: number;
}

export interface WorkerReadiness {
  consumer(): boolean;
  accounting(): boolean;
}

export async function buildApi(opts: ApiOptions): Promise<FastifyInstance> {
  const bound = opts.server;
  const app: FastifyInstance = Fastify({
    loggerInstance: opts.logger.child({ component: 'api' }) as FastifyBaseLogger,
    // Fastify's two info lines per request would drown the log: requests are logged by the summary below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Only when TRUST_PROXY names the proxies: otherwise a client could pick its own address (and per-address budget) with a header.
    trustProxy: trustProxyOf(opts.config.trustProxy),
    requestTimeout: opts.config.requestTimeoutMs,
    http: httpLimits(opts.config.requestTimeoutMs),
    // A server bound before the store was opened (commands/run.ts) was made with httpLimits too.
    ...(bound ? { serverFactory: () => bound } : {}),
  });
  const listener = opts.onRoute;
  if (listener) app.addHook('onRoute', (route) => listener(route));
  let shuttingDown = false;
  app.addHook('onClose', async () => {
    shuttingDown = true;
  });
  installErrorHandler(app);
  // A write's declaration of blind-retry safety is checked as its route registers (kernel/store-outage.ts).
  installStoreOutage(app);
  // Bodies are JSON in UTF-8, bounded in depth, read by the kernel's parser (kernel/json-body.ts).
  installJsonBody(app);
  closeOnUnreadBody(app);
  // Request metrics and the request log by route template (bounded), never by raw URL.
  const requests = createRequestSummary(opts.logger.child({ component: 'api' }), opts.requestSummaryMs);
  app.addHook('onClose', async () => requests.stop());
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    opts.metrics.httpRequest(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    requests.record(req.method, route, reply.statusCode, reply.elapsedTime);
  });
  // Requests are checked against their route's schema, answers serialised through theirs (kernel/schema.ts).
  installSchemas(app);
  // Text the store cannot hold (NUL, half a surrogate pair) is refused on every route, naming the field.
  installStorableText(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'logdrain',
        version: buildInfo().version,
        description: 'The platform API: log drain administration, log reads and ingestion, telephony (SIP trunks, phone numbers, RCS and voice agents), persona, channel sends and workflows.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: ({ schema, url }) => ({ schema: documentedSchema(schema), url }),
  });
  // The interactive document at /docs (@fastify/swagger-ui: the page, its assets, and the document
  // again at /docs/json and /docs/yaml) is public like /docs/openapi.json. The plugin's routes take
  // no route options, so they are declared public here, before the access kernel's check sees them:
  // only routes of the plugin's own context (the one holding its `swaggerCSP` decorator) and only
  // when they declare nothing themselves.
  app.addHook('onRoute', function declareDocsPublic(route) {
    if (this.hasDecorator('swaggerCSP') && route.config?.access === undefined) {
      route.config = { ...(route.config ?? {}), access: { resource: 'public' } };
    }
  });
  // Every route below declares its access; the kernel enforces it (kernel/access.ts).
  const limiter = createRateLimiter(opts.store, { syncMs: opts.config.rateLimitSyncMs });
  installAccess(app, { store: opts.store, limiter, deprecatedScopesSunset: opts.config.deprecatedScopesSunset });
  const open = { config: { access: { resource: 'public' as const } } };
  app.get('/docs/openapi.json', { schema: { hide: true }, ...open }, async () => app.swagger());
  // In a context of its own, so that its decorator marks its routes and no others. A credential typed
  // under Authorize is not kept in the browser's storage (persistAuthorization).
  await app.register(async (docs) => {
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, persistAuthorization: false } });
  });

  // The drain health page at /ui/ (api/health-page.ts): static files, public like /docs; its data
  // comes from the drain routes, called with the key the user pastes.
  registerHealthPage(app);

  app.get('/healthz', { ...open, schema: operatorSchemas.healthz }, async () => ({ status: 'ok' as const }));
  app.get('/readyz', { ...open, schema: operatorSchemas.readyz }, async (_req, reply) => {
    const worker = opts.worker;
    const checks = {
      store: await opts.store.ping(),
      consumer: worker ? worker.consumer() : true,
      ...(worker ? { accounting: worker.accounting() } : {}),
      shuttingDown,
    };
    const ready = checks.store && checks.consumer && checks.accounting !== false && !shuttingDown;
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
  app.get('/metrics', { ...open, schema: operatorSchemas.metrics }, async (_req, reply) =>
    reply.header('content-type', opts.metrics.registry.contentType).send(await opts.metrics.scrape()),
  );

  // The route families (src/modules/index.ts).
  const vendors = createVendors(opts.config);
  // The channels family's send port, handed to the families that send through it (workflows).
  const metrics = opts.metrics.families;
  const channelNotifications = createChannelNotifications({ config: opts.config, store: opts.store.kernel, logger: opts.logger, vendors, metrics });
  // The persona, workflows and skills families' parts of a template install, handed to the templates family.
  const templatePorts = createTemplatePorts({ store: opts.store.kernel, logger: opts.logger });
  // Families get the kernel store; the drain tables and the log copy's reads go to their families alone.
  // One listening connection for every family's read caches.
  const reads = await createReadCaches(opts.store.sql, { listen: opts.config.drainConfigListen });
  app.addHook('onClose', () => reads.stop());
  const deps: PlatformDeps = { config: opts.config, store: opts.store.kernel, drainTables: opts.store.drainTables, logs: opts.store.logs, logger: opts.logger, limiter, sink: opts.sink, vendors, channelNotifications, metrics, templatePorts, reads };
  for (const family of families) await registerFamily(app, family, deps);
  return app;
}

/** TRUST_PROXY as fastify takes it: a hop count as proxy-addr's trust function (the first `n` hops are trusted). */
function trustProxyOf(setting: Config['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return typeof setting === 'boolean' ? setting : [...setting];
}
