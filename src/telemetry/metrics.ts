/**
 * Prometheus metrics (prom-client): the pipeline's events turned into
 * counters and histograms, plus process and event-loop metrics. Labels are
 * bounded sets only (README, Metrics).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PipelineEvents } from './events.js';

export interface Metrics {
  registry: Registry;
  events: PipelineEvents;
}

export function createMetrics(role: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role });
  collectDefaultMetrics({ register: registry, prefix: 'logdrain_' });
  const consumed = new Counter({ name: 'logdrain_records_consumed_total', help: 'Records read from the source', labelNames: ['source'], registers: [registry] });
  const dead = new Counter({ name: 'logdrain_records_dead_lettered_total', help: 'Malformed records skipped into dead letters', labelNames: ['reason'], registers: [registry] });
  const selected = new Counter({ name: 'logdrain_records_selected_total', help: 'Record copies selected for a drain', labelNames: ['drain_type'], registers: [registry] });
  const batches = new Counter({ name: 'logdrain_batches_total', help: 'Delivery attempts by outcome', labelNames: ['drain_type', 'kind', 'outcome', 'error_class'], registers: [registry] });
  const records = new Counter({ name: 'logdrain_records_delivered_total', help: 'Records in successful delivery attempts', labelNames: ['drain_type'], registers: [registry] });
  const bytes = new Counter({ name: 'logdrain_bytes_sent_total', help: 'Compressed bytes sent', labelNames: ['drain_type', 'outcome'], registers: [registry] });
  const dropped = new Counter({ name: 'logdrain_records_dropped_total', help: 'Records deliberately dropped', labelNames: ['drain_type', 'reason'], registers: [registry] });
  const latency = new Histogram({
    name: 'logdrain_delivery_latency_seconds', help: 'Delivery attempt latency', labelNames: ['drain_type', 'outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry],
  });
  const lag = new Gauge({ name: 'logdrain_consumer_lag', help: 'Messages behind the high watermark', labelNames: ['partition'], registers: [registry] });

  return {
    registry,
    events: {
      consumed: (source, n) => consumed.inc({ source }, n),
      deadLettered: (reason) => dead.inc({ reason }),
      selected: (drainType, n) => selected.inc({ drain_type: drainType }, n),
      batchSent(e) {
        batches.inc({ drain_type: e.drainType, kind: e.kind, outcome: e.outcome, error_class: e.errorClass ?? 'none' });
        bytes.inc({ drain_type: e.drainType, outcome: e.outcome }, e.bytesCompressed);
        latency.observe({ drain_type: e.drainType, outcome: e.outcome }, e.latencyMs / 1000);
        if (e.outcome === 'ok') records.inc({ drain_type: e.drainType }, e.records);
      },
      recordsDropped: (drainType, reason, n) => dropped.inc({ drain_type: drainType, reason }, n),
      lag: (partition, value) => lag.set({ partition: String(partition) }, value),
    },
  };
}
