/**
 * One entry of the log read routes and of the NDJSON export (docs/api.md, "Log
 * read routes"): the stored record with its derived names. Every field is
 * always present; optional ones are null (attributes: `{}`), so clients
 * need no existence checks.
 */
import { SEVERITY_NUMBER, type Severity } from '../../model/drain.js';
import type { LogRow } from './repository.js';
import type { LogEntry } from './schemas.js';

export function logEntry(r: LogRow): LogEntry {
  return {
    id: r.id,
    timestamp: r.ts.toISOString(),
    orgId: r.orgId,
    agentId: r.agentId,
    agentName: r.agentName,
    agentVersion: r.agentVersion,
    environment: r.environment,
    source: r.source,
    eventName: `svc.${r.source}.${r.event}`,
    severity: r.severity,
    severityNumber: SEVERITY_NUMBER[r.severity as Severity] ?? 0,
    message: r.message,
    executionId: r.executionId,
    traceId: r.traceId,
    spanId: r.spanId,
    attributes: r.attributes ?? {},
  };
}
