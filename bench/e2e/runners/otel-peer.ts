/**
 * The peer of the end-to-end benchmark: what a Node user would pick today to ship these records
 * as logs, the OpenTelemetry JS logs SDK 0.223. One LoggerProvider per resource (organization,
 * agent: the SDK carries one resource per provider, and the benchmark has 8), each with a
 * BatchLogRecordProcessor (batches of 1000, other settings as shipped) and an OTLP/HTTP protobuf
 * exporter to TARGET_URL. The records come from the same topic as every other runner's.
 *
 *   PEER_GZIP=1    the exporter compresses (gzip; the SDK has no level setting)
 *   PEER_SCRUB=1   a LogRecordProcessor ahead of the batch processor applies logdrain's built-in
 *                  scrub patterns with RE2 to the body and string attributes (the same work as
 *                  the engine; checked against logdrain's own scrubber at start)
 *
 * The resource and record attributes are those logdrain's OTLP encoding sends (buildResource,
 * svc.execution.id, svc.record.id, event name, severity, trace context), so both carry the same
 * content. The batch processor drops records when its queue (2048) is full, so a resource's
 * records not yet answered are held to that many: the partition waits instead.
 */
import RE2 from 're2';
import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import type { Logger } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter, type LogRecordProcessor, type ReadableLogRecord, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import { buildResource, resourceKey } from '../../../src/model/resource.js';
import { SEVERITY_NUMBER, SEVERITY_TEXT } from '../../../src/shape/delivered-record.js';
import { scrubBuiltin } from '../../../src/shape/builtin-scrub.js';
import type { AgentRecord } from '../../../src/model/record.js';
import { Gate, requiredEnv, startRunner } from './runner-kit.js';

const gzip = process.env.PEER_GZIP === '1';
const scrub = process.env.PEER_SCRUB === '1';
const target = requiredEnv('TARGET_URL');
const MAX_QUEUE = 2048;

/** logdrain's built-in patterns (src/shape/scrubber.ts BUILTIN), as a user would write them for RE2. */
const scrubPattern = new RE2('(?i:(?P<bearer>bearer\\s+)[A-Za-z0-9._~+/=-]{8,}|whsec_[A-Za-z0-9+/=]{8,}|\\b(?:sk|pk|lk|rk|api|key|token)[_-][A-Za-z0-9_-]{12,})', 'gu');
const scrubText = (text: string): string => {
  scrubPattern.lastIndex = 0;
  if (!scrubPattern.test(text)) return text;
  scrubPattern.lastIndex = 0;
  return scrubPattern.replace(text, '$<bearer>[scrubbed]');
};
for (const sample of ['ok Authorization: Bearer abcdefgh12345678', 'whsec_QUJDREVGR0hJSktM and sk_live_abcdefghijklmnop', 'token-abc', 'BEARER\tx.y.z~+/=-12345']) {
  if (scrubText(sample) !== scrubBuiltin(sample).text) throw new Error(`peer scrub differs from logdrain's on ${JSON.stringify(sample)}`);
}

const scrubProcessor: LogRecordProcessor = {
  onEmit(record: SdkLogRecord) {
    if (typeof record.body === 'string') {
      const out = scrubText(record.body);
      if (out !== record.body) record.setBody(out);
    }
    const attrs = record.attributes;
    for (const k in attrs) {
      const v = attrs[k];
      if (typeof v === 'string') {
        const out = scrubText(v);
        if (out !== v) record.setAttribute(k, out);
      }
    }
  },
  forceFlush: async () => {},
  shutdown: async () => {},
};

interface Emitter {
  logger: Logger;
  provider: LoggerProvider;
  /** Records emitted and not yet answered. */
  unsettled: number;
}

const gate = new Gate();
const emitters = new Map<string, Emitter>();

/** The exporter as shipped, with a count of what it settles (for backpressure and the report). */
function countingExporter(e: Emitter): LogRecordExporter {
  const inner = new OTLPLogExporter({ url: target, ...(gzip ? { compression: 'gzip' as never } : {}) });
  return {
    export(records: ReadableLogRecord[], done: (r: ExportResult) => void) {
      clock.posted();
      inner.export(records, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          process.stderr.write(`[otel-peer] export of ${records.length} records failed: ${String(result.error)}\n`);
          process.exit(2);
        }
        e.unsettled -= records.length;
        gate.wake();
        clock.delivered(records.length);
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
  };
}

function emitterFor(r: AgentRecord): Emitter {
  const key = resourceKey(r);
  let e = emitters.get(key);
  if (e) return e;
  const emitter = { unsettled: 0 } as Emitter;
  const batch = new BatchLogRecordProcessor({ exporter: countingExporter(emitter), maxExportBatchSize: 1000, maxQueueSize: MAX_QUEUE });
  emitter.provider = new LoggerProvider({
    resource: resourceFromAttributes(buildResource(r, undefined)),
    processors: scrub ? [scrubProcessor, batch] : [batch],
  });
  emitter.logger = emitter.provider.getLogger('logdrain', '1.0');
  emitters.set(key, (e = emitter));
  return e;
}

const clock = startRunner({
  runner: gzip || scrub ? 'otel-peer' : 'otel-peer-default',
  async eachBatch({ batch, heartbeat }) {
    for (const m of batch.messages) {
      if (!m.value) continue;
      const r = JSON.parse(m.value.toString('utf8')) as AgentRecord;
      const e = emitterFor(r);
      if (e.unsettled >= MAX_QUEUE) await gate.until(() => e.unsettled < MAX_QUEUE);
      e.unsettled++;
      const attributes: Record<string, string | number | boolean> = { ...r.attributes, 'svc.execution.id': r.executionId, 'svc.record.id': r.id };
      e.logger.emit({
        timestamp: Date.parse(r.timestamp),
        severityNumber: SEVERITY_NUMBER[r.severity],
        severityText: SEVERITY_TEXT[r.severity],
        eventName: `svc.${r.source}.${r.event}`,
        ...(r.message !== undefined ? { body: r.message } : {}),
        attributes,
        ...(r.traceId && r.spanId ? { context: trace.setSpanContext(ROOT_CONTEXT, { traceId: r.traceId, spanId: r.spanId, traceFlags: TraceFlags.SAMPLED }) } : {}),
      });
    }
    await heartbeat();
  },
  close: async () => {
    for (const e of emitters.values()) await e.provider.shutdown();
  },
});
