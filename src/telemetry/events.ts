/**
 * What the pipeline stages report. Stages call these hooks and never import
 * prom-client; telemetry/metrics.ts turns them into metrics. Every label
 * value is from a small fixed set (source name, drain type, outcome, error
 * class): never an org id, a drain id or anything secret.
 */
export interface PipelineEvents {
  consumed(source: string, count: number): void;
  deadLettered(reason: string): void;
  selected(drainType: string, count: number): void;
  batchSent(e: {
    drainType: string;
    kind: string;
    outcome: 'ok' | 'retry' | 'dropped';
    errorClass: string | undefined;
    records: number;
    bytes: number;
    bytesCompressed: number;
    latencyMs: number;
  }): void;
  recordsDropped(drainType: string, reason: string, count: number): void;
  lag(partition: number, lag: number): void;
}

export const noEvents: PipelineEvents = {
  consumed() {},
  deadLettered() {},
  selected() {},
  batchSent() {},
  recordsDropped() {},
  lag() {},
};
