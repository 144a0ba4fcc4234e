/**
 * Prometheus metrics (prom-client): the pipeline's events turned into
 * counters and histograms, gauges read at scrape time (in-flight records,
 * the backlog, quota use and drain states from the shared store), the API's
 * requests, and process and event-loop metrics. The catalogue is in
 * docs/operations.md (Metrics); a test holds the two in agreement.
 *
 * Labels are bounded sets only: drain type, outcome, error class, reason,
 * state, partition, route template, and the families' kinds, statuses and
 * outcomes (family-metrics.ts). Organization and drain ids appear only
 * when METRICS_DRAIN_LABELS is set, and then only on the per-drain gauges.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PipelineEvents } from './events.js';
import type { ErrorClass } from '../model/delivery.js';
import type { deadLetterClass } from '../model/record.js';
import { DRAIN_TYPES, type DrainGauge } from '../model/drain.js';
import { DROP_REASONS as ALL_DROP_REASONS, dropReasonOf } from '../model/drop-reasons.js';
import { buildInfo } from '../config/build-info.js';
import type { FamilyMetrics } from '../modules/platform-deps.js';
import { createFamilyMetrics } from './family-metrics.js';


/** What the scrape-time gauges read; attached by the worker once it runs. */
export interface MetricSources {
  inFlightRecords?: () => number;
  /** The live drains with backlog and today's usage (one query, cached for a second). */
  drainGauges?: () => Promise<DrainGauge[]>;
  quota?: { eventsPerDay: number; bytesPerDay: number };
  bufferHorizonMs?: number;
  /** Drains whose circuit is not closed, by type and state (the shared store's view). */
  circuits?: () => Promise<{ drainType: string; state: string; count: number }[]>;
}

export interface Metrics {
  registry: Registry;
  events: PipelineEvents;
  attach(sources: MetricSources): void;
  /** The exposition text; the per-drain gauges read the store once for the whole scrape. */
  scrape(): Promise<string>;
  /** One API request, by route template (never the raw URL). */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** The route families' counters and gauges (telemetry/family-metrics.ts), handed to them as a port. */
  families: FamilyMetrics;
}

const DEAD_LETTER_REASONS = ['not_json', 'too_large', 'empty', 'invalid'] as const satisfies readonly ReturnType<typeof deadLetterClass>[];
/** Why records are dropped: the quota ladder, the buffer horizon, or the error class that ended a batch. */
const DROP_REASONS = ['quota', 'horizon', 'http_3xx', 'http_4xx', 'http_5xx', 'timeout', 'connect', 'tls', 'dns', 'ssrf'] as const satisfies readonly ('quota' | 'horizon' | ErrorClass)[];

/** The drain health's reasons (model/drop-reasons.ts): the error classes of `dropped` above count as `permanent`. */
const NOT_DELIVERED_REASONS = ALL_DROP_REASONS;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(role: string, opts: { drainLabels?: boolean } = {}): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role });
  collectDefaultMetrics({ register: registry, prefix: 'logdrain_' });
  const registers = [registry];
  const build = buildInfo();
  new Gauge({ name: 'logdrain_build_info', help: 'Always 1; the version and commit this process runs', labelNames: ['version', 'commit'], registers }).set(build, 1);

  const consumed = new Counter({ name: 'logdrain_records_consumed_total', help: 'Records read from the source', labelNames: ['source'], registers });
  const dead = new Counter({ name: 'logdrain_records_dead_lettered_total', help: 'Malformed records skipped into dead letters, by reason class', labelNames: ['reason'], registers });
  const selected = new Counter({ name: 'logdrain_records_selected_total', help: 'Record copies selected for a drain', labelNames: ['drain_type'], registers });
  const sampledOut = new Counter({ name: 'logdrain_records_sampled_out_total', help: 'Record copies left out by a drain\'s debug sampling', labelNames: ['drain_type'], registers });
  const scrubbed = new Counter({ name: 'logdrain_records_scrubbed_total', help: 'Selected record copies with at least one scrub hit', labelNames: ['drain_type'], registers });
  const scrubHits = new Counter({ name: 'logdrain_scrub_hits_total', help: 'Scrub rule matches replaced', labelNames: ['drain_type'], registers });
  const batches = new Counter({ name: 'logdrain_batches_total', help: 'Delivery attempts by kind, outcome and error class', labelNames: ['drain_type', 'kind', 'outcome', 'error_class'], registers });
  const delivered = new Counter({ name: 'logdrain_records_delivered_total', help: 'Records in successful delivery attempts', labelNames: ['drain_type'], registers });
  const bytes = new Counter({ name: 'logdrain_bytes_sent_total', help: 'Compressed bytes sent', labelNames: ['drain_type', 'outcome'], registers });
  const dropped = new Counter({ name: 'logdrain_records_dropped_total', help: 'Records deliberately dropped, by reason', labelNames: ['drain_type', 'reason'], registers });
  const notDelivered = new Counter({ name: 'logdrain_records_not_delivered_total', help: 'Records of a drain\'s organization not delivered to it, by the reason its health counts them under', labelNames: ['drain_type', 'reason'], registers });
  // The rare-event counters the alerts watch with increase() exist at 0 from the start: Prometheus
  // sees no increase in a series whose first sample is already 1, so a first dead letter or horizon
  // drop would never alert.
  for (const reason of DEAD_LETTER_REASONS) dead.inc({ reason }, 0);
  for (const drainType of DRAIN_TYPES) for (const reason of DROP_REASONS) dropped.inc({ drain_type: drainType, reason }, 0);
  for (const drainType of DRAIN_TYPES) for (const reason of NOT_DELIVERED_REASONS) notDelivered.inc({ drain_type: drainType, reason }, 0);
  const retries = new Counter({ name: 'logdrain_delivery_retries_total', help: 'Failed attempts that will be retried', labelNames: ['drain_type', 'error_class'], registers });
  const circuitOpenings = new Counter({ name: 'logdrain_drain_circuit_openings_total', help: 'Drain circuits opened (a failed probe opening one again included), counted by the worker that opened it', labelNames: ['drain_type'], registers });
  const stored = new Counter({ name: 'logdrain_logs_stored_total', help: 'Records written to the platform copy (log read routes)', registers });
  const latency = new Histogram({ name: 'logdrain_delivery_latency_seconds', help: 'Delivery attempt latency', labelNames: ['drain_type', 'outcome'], buckets: LATENCY_BUCKETS, registers });
  const lag = new Gauge({ name: 'logdrain_consumer_lag', help: 'Messages behind the high watermark, per partition this worker reads', labelNames: ['partition'], registers });
  const httpRequests = new Counter({ name: 'logdrain_http_requests_total', help: 'API requests', labelNames: ['method', 'route', 'status_class'], registers });
  const httpDuration = new Histogram({ name: 'logdrain_http_request_duration_seconds', help: 'API request duration', labelNames: ['method', 'route'], buckets: LATENCY_BUCKETS, registers });

  // Every delivery attempt counts into four or five series: their children are kept, so an attempt
  // does not hash its label sets again (a few µs a POST, which add up when batches are small).
  const attemptSeries = new Map<string, { batches: Counter.Internal; bytes: Counter.Internal; latency: Histogram.Internal<string>; delivered: Counter.Internal; retries: Counter.Internal }>();
  const seriesOf = (drainType: string, kind: string, outcome: string, errorClass: string) => {
    const key = `${drainType}\u0000${kind}\u0000${outcome}\u0000${errorClass}`;
    let s = attemptSeries.get(key);
    if (s === undefined) {
      attemptSeries.set(key, (s = {
        batches: batches.labels({ drain_type: drainType, kind, outcome, error_class: errorClass }),
        bytes: bytes.labels({ drain_type: drainType, outcome }),
        latency: latency.labels({ drain_type: drainType, outcome }),
        delivered: delivered.labels({ drain_type: drainType }),
        retries: retries.labels({ drain_type: drainType, error_class: errorClass }),
      }));
    }
    return s;
  };

  // The partitions with a lag series, so those lost in a rebalance can be removed.
  const lagPartitions = new Set<string>();
  let sources: MetricSources = {};
  new Gauge({
    name: 'logdrain_records_in_flight', help: 'Records taken from the source and still held (open batches, deliveries, accounting writes)', registers,
    collect() {
      if (sources.inFlightRecords) this.set(sources.inFlightRecords());
    },
  });
  new Gauge({
    name: 'logdrain_buffer_horizon_seconds', help: 'How long parked records wait before they are dropped (BUFFER_HORIZON_MS)', registers,
    collect() {
      if (sources.bufferHorizonMs !== undefined) this.set(sources.bufferHorizonMs / 1000);
    },
  });

  // The per-drain gauges come from one store query per scrape, shared by all of them
  // (scrape() starts a fresh one; concurrent scrapes share it).
  let cached: Promise<DrainGauge[]> | undefined;
  const drainRows = (): Promise<DrainGauge[]> => {
    if (!sources.drainGauges) return Promise.resolve([]);
    cached ??= sources.drainGauges().catch(() => []);
    return cached;
  };
  const drainLabelNames = opts.drainLabels ? ['drain_type', 'org_id', 'drain_id'] : ['drain_type'];
  const drainLabels = (r: DrainGauge): Record<string, string> =>
    opts.drainLabels ? { drain_type: r.type, org_id: r.orgId, drain_id: r.drainId } : { drain_type: r.type };
  /** Sets a per-drain gauge: summed (or maxed) per type, or per drain when ids are allowed. */
  const perDrain = (name: string, help: string, value: (r: DrainGauge) => number, combine: 'sum' | 'max') =>
    new Gauge({
      name, help, labelNames: drainLabelNames, registers,
      async collect() {
        const rows = await drainRows();
        this.reset();
        const values = new Map<string, { labels: Record<string, string>; v: number }>();
        for (const r of rows) {
          const labels = drainLabels(r);
          const key = JSON.stringify(labels);
          const prev = values.get(key);
          const v = value(r);
          if (!prev) values.set(key, { labels, v });
          else prev.v = combine === 'sum' ? prev.v + v : Math.max(prev.v, v);
        }
        for (const { labels, v } of values.values()) this.set(labels, v);
      },
    });
  perDrain('logdrain_backlog_records', 'Records parked in the durable backlog (shared store: every worker reports the same; use max)', (r) => r.backlogRecords, 'sum');
  perDrain('logdrain_backlog_bytes', 'Bytes of records parked in the durable backlog', (r) => r.backlogBytes, 'sum');
  perDrain('logdrain_backlog_oldest_age_seconds', 'Age of the oldest parked record', (r) => (r.oldestParkedAt ? Math.max(0, (Date.now() - r.oldestParkedAt.getTime()) / 1000) : 0), 'max');
  perDrain('logdrain_quota_used_ratio', 'Highest share of its daily quota (events or bytes) a drain has used today', (r) => {
    const q = sources.quota;
    return q ? Math.max(r.usageEvents / q.eventsPerDay, r.usageBytes / q.bytesPerDay) : 0;
  }, 'max');
  new Gauge({
    name: 'logdrain_drains', help: 'Live drains by type and state', labelNames: ['drain_type', 'state'], registers,
    async collect() {
      const rows = await drainRows();
      this.reset();
      const counts = new Map<string, number>();
      for (const r of rows) counts.set(`${r.type}\u0000${r.state}`, (counts.get(`${r.type}\u0000${r.state}`) ?? 0) + 1);
      for (const [k, n] of counts) {
        const [type, state] = k.split('\u0000') as [string, string];
        this.set({ drain_type: type, state }, n);
      }
    },
  });

  new Gauge({
    name: 'logdrain_drain_circuits_open', help: 'Drains whose circuit is open or half open (shared store: every worker reports the same; use max)', labelNames: ['drain_type', 'state'], registers,
    async collect() {
      if (!sources.circuits) return;
      const rows = await sources.circuits().catch(() => undefined);
      if (rows === undefined) return;
      this.reset();
      for (const r of rows) this.set({ drain_type: r.drainType, state: r.state }, r.count);
    },
  });

  const families = createFamilyMetrics(registry);

  return {
    registry,
    families,
    attach(s) {
      sources = { ...sources, ...s };
    },
    scrape() {
      cached = undefined;
      return registry.metrics();
    },
    httpRequest(method, route, status, seconds) {
      httpRequests.inc({ method, route, status_class: `${Math.floor(status / 100)}xx` });
      httpDuration.observe({ method, route }, seconds);
    },
    events: {
      consumed: (source, n) => consumed.inc({ source }, n),
      deadLettered: (reason) => dead.inc({ reason }),
      routed(drainType, t) {
        const labels = { drain_type: drainType };
        if (t.selected > 0) selected.inc(labels, t.selected);
        if (t.sampledOut > 0) {
          sampledOut.inc(labels, t.sampledOut);
          notDelivered.inc({ drain_type: drainType, reason: 'sampling' }, t.sampledOut);
        }
        if (t.skipped > 0) notDelivered.inc({ drain_type: drainType, reason: 'selector' }, t.skipped);
        if (t.oversize > 0) notDelivered.inc({ drain_type: drainType, reason: 'oversize' }, t.oversize);
        if (t.deadLettered > 0) notDelivered.inc({ drain_type: drainType, reason: 'dead_letter' }, t.deadLettered);
        if (t.scrubbed > 0) scrubbed.inc(labels, t.scrubbed);
        if (t.scrubHits > 0) scrubHits.inc(labels, t.scrubHits);
      },
      batchSent(e) {
        const s = seriesOf(e.drainType, e.kind, e.outcome, e.errorClass ?? 'none');
        s.batches.inc();
        s.bytes.inc(e.bytesCompressed);
        s.latency.observe(e.latencyMs / 1000);
        if (e.outcome === 'ok') s.delivered.inc(e.records);
        if (e.outcome === 'retry') s.retries.inc();
      },
      recordsDropped(drainType, reason, n) {
        dropped.inc({ drain_type: drainType, reason }, n);
        notDelivered.inc({ drain_type: drainType, reason: dropReasonOf(reason) }, n);
      },
      lag(partition, value) {
        lagPartitions.add(String(partition));
        lag.set({ partition: String(partition) }, value);
      },
      partitionsAssigned(partitions) {
        const kept = new Set(partitions.map(String));
        for (const p of lagPartitions) {
          if (kept.has(p)) continue;
          lag.remove({ partition: p });
          lagPartitions.delete(p);
        }
      },
      logsStored: (n) => stored.inc(n),
      circuitOpened: (drainType) => circuitOpenings.inc({ drain_type: drainType }),
    },
  };
}
