/**
 * Shapes an agent record into a record of the delivered batch (spec 01 part
 * 2.3): eventName, the severity pair, observed time, flat attributes, and the
 * withheld-content rule. Redaction drops attribute keys before encoding.
 */
import { CONTENT_SOURCES, SEVERITY_NUMBER, type Severity } from '../model/drain.js';

export { SEVERITY_NUMBER };
import type { AgentRecord } from '../model/record.js';

export type AttributeValue = string | number | boolean;

export interface DeliveredRecord {
  id: string;
  timestamp: string;
  observedTimestamp: string;
  eventName: string;
  severityNumber: number;
  severityText: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  body?: string;
  traceId?: string;
  spanId?: string;
  attributes: Record<string, AttributeValue>;
}

export const SEVERITY_TEXT: Record<Severity, DeliveredRecord['severityText']> = {
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
};

export interface ShapeOptions {
  includeContent: boolean;
  /** Attribute keys dropped before encoding. */
  redact: ReadonlySet<string> | null;
}

export function shapeRecord(r: AgentRecord, observedTimestamp: string, opts: ShapeOptions): DeliveredRecord {
  const attributes: Record<string, AttributeValue> = {};
  if (r.attributes) {
    for (const k in r.attributes) {
      if (opts.redact?.has(k)) continue;
      const v = r.attributes[k]!;
      // A missing attribute is absent, never an empty string.
      if (v === '') continue;
      attributes[k] = v;
    }
  }
  attributes['svc.execution.id'] = r.executionId;
  const out: DeliveredRecord = {
    id: r.id,
    timestamp: r.timestamp,
    observedTimestamp,
    eventName: `svc.${r.source}.${r.event}`,
    severityNumber: SEVERITY_NUMBER[r.severity],
    severityText: SEVERITY_TEXT[r.severity],
    attributes,
  };
  if (r.message !== undefined) {
    if (CONTENT_SOURCES.includes(r.source) && !opts.includeContent) attributes['svc.content.withheld'] = true;
    else out.body = r.message;
  }
  if (r.traceId) out.traceId = r.traceId;
  if (r.spanId) out.spanId = r.spanId;
  return out;
}
