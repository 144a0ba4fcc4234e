/**
 * The delivery worker, wired stage by stage:
 *
 *   source (Kafka or embedded queue)
 *     -> pipeline: decode, route, select, shape     (pipeline/, select/, shape/)
 *     -> batcher: per (drain, resource)              (batch/)
 *     -> deliverer: encode, gzip, sign, POST, retry  (encode/, sign/, deliver/)
 *     -> accountant: deliveries, hourly counters     (account/)
 *     -> offsets committed once accounted for        (source/offset-tracker.ts)
 */
import type { Config } from './config/config.js';
import type { Store } from './store/store.js';
import type { Logger } from './telemetry/logger.js';
import { noEvents, type PipelineEvents } from './telemetry/events.js';
import { createTransport, type Transport } from './deliver/transport.js';
import { createAccountant } from './account/accountant.js';
import { createDeliverer } from './deliver/deliverer.js';
import { createBatcher } from './batch/batcher.js';
import { createDrainRegistry } from './plan/drain-registry.js';
import { createPipeline } from './pipeline/pipeline.js';
import { createKafkaSource } from './source/kafka-source.js';
import { createEmbeddedQueueSource } from './source/embedded-queue-source.js';
import type { RecordSource } from './source/source.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ParkingSet } from './backlog/parking.js';
import { SpillPolicy } from './backlog/spill.js';
import { parkUnsent } from './backlog/park-unsent.js';
import { createBacklogPump } from './backlog/backlog-pump.js';
import { createDrainHealth } from './drains/health.js';
import { createHeartbeat } from './deliver/heartbeat.js';
import { createProbeRunner } from './deliver/probes.js';
import { createScrubPool } from './shape/scrub-pool.js';
import { createDrainCircuits } from './deliver/circuit.js';
import { createReplayRunner } from './backlog/replay-runner.js';
import { createReplayPacer } from './backlog/replay-pacing.js';

export interface Worker {
  readonly source: RecordSource;
  ready(): boolean;
  /** Whether the accountant's writes succeed (a readiness check of the process running this worker). */
  accountingHealthy(): boolean;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  config: Config;
  store: Store;
  logger: Logger;
  events?: PipelineEvents;
}

export async function startWorker(opts: WorkerOptions): Promise<Worker> {
  const { config, store, logger } = opts;
  const events = opts.events ?? noEvents;
  const transport: Transport = createTransport({
    allowHosts: config.endpointAllowHosts,
    extraCaCerts: config.extraCaCerts,
    timeoutMs: config.deliveryTimeoutMs,
  });
  const accountant = createAccountant({
    store, logger, logs: { repo: store.logs, retentionDays: config.logRetentionDays, onStored: (n) => events.logsStored(n) },
  });
  // The platform copy's day partitions: made ahead now and hourly, old ones dropped (retention).
  const maintainLogs = () =>
    store.logs.maintain(config.logRetentionDays).then(
      ({ dropped }) => dropped.length > 0 && logger.info({ event: 'logs.retention', dropped }, 'dropped expired log partitions'),
      (e) => logger.warn({ event: 'logs.maintain_failed', err: (e as Error).message }, 'log partition upkeep failed'),
    );
  await maintainLogs();
  const parking = new ParkingSet();
  const owner = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  // The drain-wide brake: an open circuit holds the drain's records parked on every worker.
  const circuits = createDrainCircuits({
    store, logger, events, owner, ...config.circuit,
    onBrake: (drainId, braked) => (braked ? parking.hold(drainId, 'circuit') : parking.release(drainId, 'circuit')),
  });
  await circuits.refresh();
  const deliverer = createDeliverer({
    circuits,
    transport, accountant, events, logger, retry: config.retry, bufferHorizonMs: config.bufferHorizonMs,
    parkAfterAttempts: config.parkAfterAttempts,
    onParking: (drainId) => parking.parking(drainId),
    observer: createDrainHealth({ store, logger }),
  });
  // At the in-flight cap with no batch being sent, only open batches hold the stream back, and waiting
  // for their linger stalls it (records count in flight until their whole chunk is accounted).
  // With batches on the way, their accounting frees capacity soon: then batches keep filling. The
  // fullest half goes (batcher.ts flushFullest): sending every open batch at each cap cut them all
  // at the cap's share (5,000 records over eight agents: batches of 625, 160 POSTs for 100,000
  // records), where the half left open keeps filling while the other half is sent.
  const onCapacityReached = () => {
    if (deliverer.inFlight === 0) batcher.flushFullest();
  };
  const spill = new SpillPolicy({
    ...config.spill, batchLingerMs: config.batch.lingerMs, parking,
    onChange: (drainId, spilling, why) =>
      logger.info({ event: spilling ? 'drain.spill_started' : 'drain.spill_ended', drainId, ...why },
        spilling ? 'small batches: batching across time through the backlog' : 'live batches would fill: going live once the backlog is delivered'),
  });
  const batcher = createBatcher({
    ...config.batch,
    region: config.region,
    onReady: (batch) => {
      const drainId = batch.plan.drain.id;
      if (batch.kind === 'batch' && spill.observe(drainId, batch.entries.length)) {
        // The drain starts spilling with this batch: it, and the drain's batches not yet sent, go to its rounds.
        parkUnsent(drainId, [...deliverer.withdrawQueued(drainId), batch, ...batcher.takeOpen(drainId)], { accountant, parking, logger });
        return;
      }
      void deliverer.submit(batch);
    },
    takesLive: (drainId) => !parking.has(drainId),
  });
  const registry = createDrainRegistry({ store, refreshMs: config.drainRefreshMs, listen: config.drainConfigListen, logger, quota: config.quota });
  await registry.start();
  // Records too heavy to scrub on this thread (customer rules on large text) are scrubbed beside it,
  // live ones as they are routed and parked ones whose scrub was deferred as the pump sends them.
  const scrubPool = createScrubPool({
    budgetMs: config.scrub.budgetMs,
    maxQueuedPerOrg: config.scrub.maxQueuedPerOrg,
    onWithheld: (recordId) => logger.warn({ event: 'scrub.withheld', recordId }, 'a record took too long to scrub: its text was withheld'),
  });
  const pump = createBacklogPump({
    store, registry, deliverer, accountant, parking, events, logger, owner, circuits,
    pollMs: config.backlogPollMs, horizonMs: config.bufferHorizonMs, batch: config.batch, retry: config.retry, spill, scrubPool,
  });
  // Know which drains have parked records before the first record is routed, so order holds.
  await pump.runOnce().catch(() => {});
  pump.start();
  // What the service sends on a drain's behalf (verify, test, heartbeat) goes through one runner.
  const probes = createProbeRunner({
    store, deliverer, transport, logger, owner, leaseMs: config.probeLeaseMs, pollMs: config.probePollMs,
    listen: config.drainConfigListen, region: config.region,
  });
  await probes.start();
  const heartbeat = createHeartbeat({ store, registry, probes, logger, owner, intervalMs: config.heartbeatIntervalMs, braked: circuits.braked });

  // Every chunk waits for plans that hold each drain change answered before its records were
  // accepted (drain-registry.ts): one version read per fetch, shared by concurrent partitions.
  const beforeChunk = () => registry.current();
  const source: RecordSource = config.kafka
    ? createKafkaSource({
        ...config.kafka,
        maxInFlightRecords: config.maxInFlightRecords,
        logger,
        beforeChunk,
        onLag: (p, lag) => events.lag(p, lag),
        onAssigned: (partitions) => events.partitionsAssigned(partitions),
        onCapacityReached,
      })
    : createEmbeddedQueueSource({
        queue: store.queue, maxInFlightRecords: config.maxInFlightRecords, logger,
        beforeChunk, onCapacityReached,
      });

  // Replays of the platform copy, sent beside live traffic, which goes first (replay-runner.ts): for
  // the drain's slots, and for this thread while the source hands over records (replay-pacing.ts).
  const pacer = createReplayPacer({ maxShare: config.replayMaxSharePercent / 100, liveInFlight: () => source.inFlightRecords(), sourceReady: () => source.ready() });
  const replays = createReplayRunner({
    store, registry, deliverer, accountant, parking, logger, owner, pollMs: config.replayPollMs, leaseMs: config.replayLeaseMs,
    batch: config.batch, retry: config.retry, region: config.region, scrubPool, pacer,
  });
  replays.start();

  const sweep = setInterval(() => {
    void maintainLogs();
    store.deliveries.sweepExpired().catch((e) => logger.warn({ event: 'sweep_failed', err: (e as Error).message }, 'delivery sweep failed'));
    store.idempotency.sweepExpired().catch((e) => logger.warn({ event: 'sweep_failed', err: (e as Error).message }, 'idempotency key sweep failed'));
  }, 3_600_000);
  sweep.unref();

  const pipeline = createPipeline({ sourceName: source.name, registry, batcher, accountant, events, parking, region: config.region, scrubPool });
  await source.start((chunk) => {
    pacer.liveConsumed(chunk.messages.length);
    pipeline(chunk);
  });
  logger.info({ event: 'worker.started', source: source.name }, 'worker started');

  let stopping: Promise<void> | undefined;
  return {
    source,
    ready: () => source.ready() && accountant.healthy(),
    accountingHealthy: () => accountant.healthy(),
    stop() {
      stopping ??= (async () => {
        const deadline = Date.now() + config.shutdownTimeoutMs;
        // Leave a second at the end for the final commit and accounting writes.
        const abandonAt = setTimeout(() => deliverer.abandonRetries(), Math.max(0, config.shutdownTimeoutMs - 1000));
        const idle = (async () => {
          do {
            batcher.flushAll();
            await deliverer.idle();
            await new Promise((r) => setImmediate(r));
          } while (batcher.openBatches > 0 || deliverer.inFlight > 0);
        })();
        batcher.flushAll();
        heartbeat.stop();
        // No probe is claimed after this; those running finish with the deliverer's batches.
        const probesStopped = probes.stop();
        await pump.stop();
        // Each running replay ends its page, records its position and gives its lease back.
        await replays.stop();
        await source.stop(deadline, idle);
        await probesStopped;
        await scrubPool.close();
        clearTimeout(abandonAt);
        clearInterval(sweep);
        await registry.stop();
        await accountant.stop();
        await transport.close().catch(() => {});
        logger.info({ event: 'worker.stopped' }, 'worker stopped');
      })();
      return stopping;
    },
  };
}
