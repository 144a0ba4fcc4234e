/** The drain as the worker and the REST layer see it (secrets still sealed). */

// The drain types are the destinations' (src/destinations/index.ts).
export { DRAIN_TYPES, type DrainType } from '../destinations/index.js';
import type { DrainType } from '../destinations/index.js';

export const DRAIN_STATES = ['pending_verification', 'healthy', 'degraded', 'paused'] as const;
export type DrainState = (typeof DRAIN_STATES)[number];

export const SEVERITIES = ['debug', 'info', 'warn', 'error'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** OpenTelemetry severity numbers of the four levels. */
export const SEVERITY_NUMBER: Record<Severity, number> = { debug: 5, info: 9, warn: 13, error: 17 };

export const ENVIRONMENTS = ['production', 'sandbox'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const CONTENT_SOURCES: readonly string[] = ['user_message', 'agent_response'];

export interface Selectors {
  /** `null`: every source but the content sources. */
  sources: string[] | null;
  minSeverity: Severity;
  agents: '*' | string[];
  environments: Environment[];
  includeContent: boolean;
}

export interface StoredHeader {
  name: string;
  /** Sealed with the store's secret box. */
  value: string;
  last4: string;
}

export interface ScrubRule {
  id: string;
  pattern: string;
  flags?: string;
}

export interface Drain {
  id: string;
  orgId: string;
  name: string;
  type: DrainType;
  endpoint: string | null;
  site: string | null;
  format: 'json' | 'ndjson';
  headers: StoredHeader[];
  /** Sealed signing secret (http drains). */
  secret: string | null;
  /** Sealed previous secret while a rotation window is open. */
  previousSecret: string | null;
  rotationStartedAt: Date | null;
  rotationExpiresAt: Date | null;
  selectors: Selectors;
  sampling: { debug: number } | null;
  redact: string[] | null;
  scrubRules: ScrubRule[] | null;
  state: DrainState;
  pauseReason: string | null;
  verifiedAt: Date | null;
  /** The last verification attempt; `endpoint`: the destination it verified (recorded since verification belongs to an endpoint). */
  verification: {
    attemptedAt: string;
    outcome: string;
    statusCode?: number;
    latencyMs?: number;
    endpoint?: string;
    /** On a failed attempt: its class (as a delivery's `errorClass`, or `verify_mismatch`, `endpoint_changed`) and why, in words that name the fix. */
    errorClass?: string;
    reason?: string;
  } | null;
  version: number;
  createdBy: { type: string; id: string };
  createdAt: Date;
  updatedAt: Date;
}

/** States in which the worker sends batches; the others park records (ARCHITECTURE invariant 2). */
export function isDeliverable(state: DrainState): boolean {
  return state === 'healthy' || state === 'degraded';
}

/**
 * Whether the drain's current endpoint passed verification. Verification belongs to an endpoint,
 * not to a drain: a PATCH to another endpoint clears `verifiedAt`, and the endpoint a success
 * verified is recorded in `verification.endpoint` (absent on drains verified before it was), so a
 * drain can never resume into delivery on its previous endpoint's proof.
 */
export function isVerifiedForEndpoint(d: Pick<Drain, 'verifiedAt' | 'verification' | 'endpoint'>): boolean {
  if (d.verifiedAt === null) return false;
  const verified = d.verification?.endpoint;
  return verified === undefined || verified === d.endpoint;
}

/** One live drain's backlog and today's usage: what the store reads for the per-drain gauges of /metrics. */
export interface DrainGauge {
  drainId: string;
  orgId: string;
  type: string;
  state: string;
  backlogRecords: number;
  backlogBytes: number;
  oldestParkedAt: Date | null;
  usageEvents: number;
  usageBytes: number;
}
