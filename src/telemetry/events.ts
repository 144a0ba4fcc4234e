/**
 * What the pipeline stages report. Stages call these hooks and never import
 * prom-client; telemetry/metrics.ts turns them into metrics. Every label
 * value is from a small fixed set (source name, drain type, outcome, error
 * class): never an org id, a drain id or anything secret.
 */
export interface RoutingTally {
  /** Record copies selected for drains of this type. */
  selected: number;
  /** Copies a drain's selectors wanted but its debug sampling left out. */
  sampledOut: number;
  /** Records of the drain's organization its selectors did not want. */
  skipped: number;
  /** Dead letters naming the drain's organization: over the size limit, or malformed otherwise. */
  oversize: number;
  deadLettered: number;
  /** Selected copies with at least one scrub hit, and the hits. */
  scrubbed: number;
  scrubHits: number;
}

export interface PipelineEvents {
  consumed(source: string, count: number): void;
  deadLettered(reason: string): void;
  /** One call per drain type per source chunk (counting per record would cost more than the work). */
  routed(drainType: string, tally: RoutingTally): void;
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
  /** The partitions this worker reads since its latest group join: lag reported for any other is stale. */
  partitionsAssigned(partitions: readonly number[]): void;
  /** Rows written to the platform copy (log read routes). */
  logsStored(count: number): void;
  /** A drain's circuit opened (or a failed probe opened it again), counted by the worker whose store update won. */
  circuitOpened?(drainType: string): void;
}

export const noEvents: PipelineEvents = {
  consumed() {},
  deadLettered() {},
  routed() {},
  batchSent() {},
  recordsDropped() {},
  lag() {},
  partitionsAssigned() {},
  logsStored() {},
};
