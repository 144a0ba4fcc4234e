/**
 * Process composition for `start` (API + worker), `serve` (API only) and
 * `worker` (worker only, with its own /metrics listener), and the graceful
 * stop on SIGTERM/SIGINT (CONTRACT part 1).
 */
import { buildInfo } from '../config/build-info.js';
import type { Config } from '../config/config.js';
import type { Vendors } from '../vendors/index.js';
import { openStore, type Store } from '../store/store.js';
import { createLogger, type Logger } from '../telemetry/logger.js';
import { createMetrics } from '../telemetry/metrics.js';
import { openWorkerListener } from '../telemetry/worker-listener.js';
import { openHttpListener, type HttpListener } from './http-listener.js';
import { httpLimits } from '../api/http-limits.js';
import { drainingAnswer } from '../api/kernel/store-outage.js';
import type { RequestListener } from 'node:http';
import type { Metrics } from '../telemetry/metrics.js';
import type { Worker } from '../worker.js';
import type { KafkaSink } from '../source/kafka-sink.js';
import type { RecordSink } from '../source/sink.js';
import { dayOf } from '../model/time.js';
import { keepStatistics, type StatisticsKeeper } from '../store/statistics.js';
import { createChannelNotifications, createWorkflowExecutor, familyMigrations, type WorkflowExecutor } from '../modules/background.js';

// What only some roles run is imported where a role needs it (`await import`): a `logdrain
// worker` loads none of the API (fastify, the families' routes and schemas, the seed), which would
// cost it some 35 MB of memory and half a second of start-up; `serve` loads none of the delivery
// engine. The listeners bind before any of it loads, so probes are answered from the first moment.

export type Role = 'start' | 'serve' | 'worker';

export interface Running {
  /** Port the API or the worker's metrics listener bound. */
  port: number;
  store: Store;
  stop(): Promise<void>;
}

export async function run(role: Role, config: Config, logger: Logger = createLogger(config.logLevel)): Promise<Running> {
  if (role === 'worker' && (!config.kafka || !config.databaseUrl)) {
    throw new Error('logdrain worker needs KAFKA_BROKERS and DATABASE_URL (use `logdrain start` for the embedded setup)');
  }
  // The port first: a second process on a taken port fails before it opens the store, applies the
  // seed or starts a worker; the store (the embedded one is locked to one process) next.
  const metrics = createMetrics(role === 'serve' ? 'api' : role === 'worker' ? 'worker' : 'all', { drainLabels: config.metricsDrainLabels });
  let store: Store | undefined;
  let worker: Worker | undefined;
  let stopRequested = false;
  const bound = role === 'worker'
    ? await openWorkerListener({
        host: config.host, port: config.metricsPort, metrics,
        storeUp: () => store?.ping() ?? Promise.resolve(false),
        consumerJoined: () => worker?.ready() ?? false,
        shuttingDown: () => stopRequested,
        onError: (err) => logger.error({ event: 'http.listener_error', err: err.message }, 'worker listener error'),
      })
    : await bindHttpServer(config, logger);
  try {
    store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, encryptionKey: config.encryptionKey, migrations: familyMigrations });
  } catch (e) {
    await bound.close();
    throw e;
  }
  let statistics: StatisticsKeeper | undefined;
  try {
    statistics = await keepStatistics(store.sql, {
      intervalMs: config.storeAnalyzeIntervalMs,
      onError: (err) => logger.warn({ event: 'store.analyze_failed', err: err.message }, 'analysing the store\'s tables failed'),
    });
    return await runOn(role, config, logger, metrics, store, bound, {
      setWorker: (w) => (worker = w),
      requestStop: () => (stopRequested = true),
      beforeStoreClose: () => statistics!.stop(),
    });
  } catch (e) {
    await statistics?.stop().catch(() => {});
    await bound.close().catch(() => {});
    await store.close().catch(() => {});
    throw e;
  }
}

/** The interim answer while the API is not answering yet. */
const starting: RequestListener = (_req, res) =>
  void res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ status: 'starting' }));

/** The answer to a request that arrives while a stop lets the requests in flight finish: 503 CORE_DRAINING. */
function draining(): RequestListener {
  const answer = drainingAnswer();
  return (_req, res) => void res.writeHead(answer.status, answer.headers).end(answer.body);
}

/**
 * Listens at once, with the API's time limits, answering 503 (starting) until the API is ready
 * and takes the requests over (runOn).
 */
function bindHttpServer(config: Config, logger: Logger): Promise<HttpListener> {
  return openHttpListener({
    host: config.host, port: config.port, server: httpLimits(config.requestTimeoutMs), handler: starting,
    // Node enforces the request timeout only while listening: a connection still open this long
    // after the stop began is cut.
    graceMs: config.requestTimeoutMs,
    onError: (err) => logger.error({ event: 'http.listener_error', err: err.message }, 'API listener error'),
  });
}

async function runOn(
  role: Role, config: Config, logger: Logger, metrics: Metrics, store: Store, bound: HttpListener,
  hooks: { setWorker(w: Worker): void; requestStop(): void; beforeStoreClose(): Promise<void> },
): Promise<Running> {
  if (config.seedFile && role !== 'worker') {
    const [{ readSeedFile }, { applySeed }, { familySeeds }] = await Promise.all([import('../seed/seed-file.js'), import('../seed/apply.js'), import('../modules/index.js')]);
    await applySeed(store.sql, await readSeedFile(config.seedFile, familySeeds));
    logger.info({ event: 'seed.applied', file: config.seedFile }, 'seed file applied');
  }
  const startWorkerWithGauges = async (): Promise<Worker> => {
    const { startWorker } = await import('../worker.js');
    const w = await startWorker({ config, store, logger, events: metrics.events });
    // Workers report the shared store's backlog, quota use and drain states (the API does not, so
    // dashboards take max() over workers rather than summing copies).
    metrics.attach({
      inFlightRecords: () => w.source.inFlightRecords(),
      drainGauges: () => store.backlog.drainGauges(dayOf(Date.now())),
      quota: config.quota,
      bufferHorizonMs: config.bufferHorizonMs,
      circuits: () => store.circuits.countsByType(),
    });
    return w;
  };
  let worker: Worker | undefined;
  let closeListener = bound.close;
  let kafkaSink: KafkaSink | undefined;
  let workflowExecutor: WorkflowExecutor | undefined;
  let workflowVendors: Vendors | undefined;
  if (role === 'worker') {
    // Open before the consumer joins its group: liveness and metrics from the start (telemetry/worker-listener.ts).
    logger.info({ event: 'process.listening', role, port: bound.port }, `logdrain ${role} health and metrics on ${bound.port}`);
    // The executor's vendors are loaded before the consumer joins its group: loading and lexing their
    // modules is start-up work, which would otherwise compete with the first records for the CPU.
    const vendorsModule = config.workflows.executor ? await import('../vendors/index.js') : undefined;
    worker = await startWorkerWithGauges();
    // The API processes run theirs through the workflows family; a worker runs one beside its pipeline.
    // Its run-end notifications go out through this process's own vendors and channels port.
    if (vendorsModule) {
      const { createVendors } = vendorsModule;
      const vendors = (workflowVendors = createVendors(config));
      const channelNotifications = createChannelNotifications({ config, store: store.kernel, logger, vendors, metrics: metrics.families }, { applyReceipts: true });
      workflowExecutor = createWorkflowExecutor({ config, store: store.kernel, logger, vendors, channelNotifications, metrics: metrics.families });
      await workflowExecutor.start();
    }
  } else {
    if (role === 'start') worker = await startWorkerWithGauges();
    if (config.kafka) kafkaSink = await (await import('../source/kafka-sink.js')).createKafkaSink({ brokers: config.kafka.brokers, topic: config.kafka.topic });
    const sink: RecordSink = kafkaSink ?? { write: (records) => store.queue.enqueue(records) };
    const running = worker;
    // The API sends nothing itself: its verify and test routes enqueue probes for a worker, this
    // process's in `start`, another process's behind `serve` (src/deliver/probes.ts).
    const { buildApi } = await import('../server.js');
    const app = await buildApi({
      config, store, logger, metrics, sink, server: bound.server,
      ...(running ? { worker: { consumer: () => running.source.ready(), accounting: () => running.accountingHealthy() } } : {}),
    });
    // Only a ready API answers: before, a request would reach routes whose hooks are not compiled
    // yet, and fastify throws out of the request event (the process would exit).
    await app.ready();
    bound.answerWith(app.routing);
    closeListener = async () => {
      // Until the requests in flight have finished, new ones are answered 503 CORE_DRAINING and each
      // connection closes once its answer is out; the API itself (its families' vendors, caches,
      // executor) closes once none is left.
      bound.answerWith(draining());
      await bound.close();
      await app.close();
    };
  }
  if (worker) hooks.setWorker(worker);
  const port = bound.port;
  const { version, commit } = buildInfo();
  const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  logger.info(
    { event: 'process.started', role, port, source: worker?.source.name, version, commit },
    role === 'worker'
      ? `logdrain worker running (${version}, ${commit}); /healthz, /readyz and /metrics on port ${port}`
      : `logdrain ${role} listening on ${url} (${version}, ${commit}); readiness ${url}/readyz, metrics ${url}/metrics, API document ${url}/docs/openapi.json`,
  );

  let stopping: Promise<void> | undefined;
  return {
    port,
    store,
    stop() {
      stopping ??= (async () => {
        hooks.requestStop();
        // The API stops taking requests first; a worker keeps answering /healthz (and /readyz with
        // 503, shutting down) while it drains, so a liveness probe does not kill it mid-stop.
        if (role !== 'worker') await closeListener();
        await Promise.all([worker?.stop(), workflowExecutor?.stop()]);
        await Promise.all([workflowVendors?.mail.close(), workflowVendors?.messaging.close()]).catch(() => {});
        if (role === 'worker') await closeListener();
        await kafkaSink?.close().catch(() => {});
        await hooks.beforeStoreClose();
        await store.close();
      })();
      return stopping;
    },
  };
}

/**
 * Stops on the first SIGTERM or SIGINT and exits 0; a second signal or the deadline forces exit 1.
 * Installed before the process starts: a signal during start is honoured once `started` is called.
 */
export function stopOnSignals(config: Config, logger: Logger): { started(running: Running): void } {
  let signalled = false;
  let running: Running | undefined;
  const stop = () => {
    running!.stop().then(
      () => process.exit(0),
      (e) => {
        logger.error({ event: 'process.stop_failed', err: (e as Error).message }, 'stop failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(1);
    signalled = true;
    logger.info({ event: 'process.stopping', signal, starting: running === undefined }, 'stopping');
    // The deadline runs from the signal, whatever the phase: a start that never completes (a store
    // or broker that does not answer) must not keep a stopped process alive. The timer is not
    // unref'd, so it holds the process open until the deadline even if nothing else does.
    setTimeout(() => {
      logger.error({ event: 'process.stop_timeout', starting: running === undefined }, 'graceful stop exceeded SHUTDOWN_TIMEOUT_MS');
      process.exit(1);
    }, config.shutdownTimeoutMs + 2000);
    if (running) stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    started(r) {
      running = r;
      if (signalled) stop();
    },
  };
}
