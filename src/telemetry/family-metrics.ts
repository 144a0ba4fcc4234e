/**
 * The route families' metrics (the FamilyMetrics port of src/modules/platform-deps.ts): workflow
 * runs, steps, claims and run-end notifications; channel sends and receipts; telephony dispatches,
 * voice sessions and vendor errors; skill installs. Catalogue in docs/operations.md (Metrics).
 *
 * Every label is a bounded set: the port's types name them, and a value that is not a short
 * lower-case word (an id, an address, text) is counted as `other` rather than exposed. The counters
 * the alerts watch with increase() exist at 0 for their known label values from the start.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  DISPATCH_KINDS, DISPATCH_OUTCOMES, NOTIFICATION_KINDS, NOTIFICATION_OUTCOMES, OPEN_RUN_STATUSES, SKILL_INSTALL_ACTIONS,
  TELEPHONY_VENDOR_PORTS, VENDOR_ERROR_CLASSES, type FamilyMetrics, type WorkflowRunCounts,
} from '../modules/platform-deps.js';

/** How long one read of the run gauges serves scrapes (several Prometheus servers, or a scrape and a test). */
const RUN_GAUGES_TTL_MS = 1000;

/** Claim latency: from well under a poll interval to a queue stuck for a quarter of an hour. */
const CLAIM_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/** A label value: a short lower-case word, else `other` (never an id or text, whatever a caller passes). */
const word = (v: string): string => (/^[a-z][a-z0-9_]{0,31}$/.test(v) && !/_[0-9a-z]{16,}$/.test(v) ? v : 'other');

export function createFamilyMetrics(registry: Registry, now: () => number = Date.now): FamilyMetrics {
  const registers = [registry];
  const stepAttempts = new Counter({ name: 'logdrain_workflow_step_attempts_total', help: 'Workflow step attempts begun, by step kind', labelNames: ['step_kind'], registers });
  const stepFailures = new Counter({ name: 'logdrain_workflow_step_failures_total', help: 'Workflow step attempts that failed (retried or parking the run), by step kind', labelNames: ['step_kind'], registers });
  const claimLatency = new Histogram({ name: 'logdrain_workflow_claim_latency_seconds', help: 'Time a workflow run waited in queued before an executor claimed it', buckets: CLAIM_BUCKETS, registers });
  const notifications = new Counter({ name: 'logdrain_workflow_notifications_total', help: 'Run-end notification sends settled, by kind and outcome', labelNames: ['kind', 'outcome'], registers });
  const sends = new Counter({ name: 'logdrain_channel_sends_total', help: 'Channel deliveries recorded, by channel and status at send', labelNames: ['channel', 'status'], registers });
  const receipts = new Counter({ name: 'logdrain_channel_receipts_applied_total', help: 'Vendor receipts that moved a delivery, by the status moved to', labelNames: ['status'], registers });
  const dispatches = new Counter({ name: 'logdrain_telephony_dispatches_total', help: 'Voice agent dispatches, by target kind and outcome', labelNames: ['kind', 'outcome'], registers });
  const sessions = new Counter({ name: 'logdrain_voice_sessions_created_total', help: 'Developer voice sessions opened on the media server', registers });
  const vendorErrors = new Counter({ name: 'logdrain_telephony_vendor_errors_total', help: 'Telephony vendor port calls that failed, by port and class', labelNames: ['port', 'error_class'], registers });
  const skillInstalls = new Counter({ name: 'logdrain_skill_installs_total', help: 'Marketplace skill installs created, updated and removed', labelNames: ['action'], registers });
  // In-app notifications are recorded at the run's end, never sent: no series of theirs.
  for (const kind of NOTIFICATION_KINDS) if (kind !== 'app') for (const outcome of NOTIFICATION_OUTCOMES) notifications.inc({ kind, outcome }, 0);
  for (const kind of DISPATCH_KINDS) for (const outcome of DISPATCH_OUTCOMES) dispatches.inc({ kind, outcome }, 0);
  for (const port of TELEPHONY_VENDOR_PORTS) for (const errorClass of VENDOR_ERROR_CLASSES) vendorErrors.inc({ port, error_class: errorClass }, 0);
  for (const action of SKILL_INSTALL_ACTIONS) skillInstalls.inc({ action }, 0);
  sessions.inc(0);

  // The run gauges read the shared store (one grouped count over the partial index of open runs),
  // at most once a second however many scrapes come; a failed read leaves the gauges empty.
  let readRuns: (() => Promise<WorkflowRunCounts>) | undefined;
  let cached: { at: number; value: Promise<WorkflowRunCounts | undefined> } | undefined;
  const runCounts = (): Promise<WorkflowRunCounts | undefined> => {
    if (readRuns === undefined) return Promise.resolve(undefined);
    const t = now();
    if (cached === undefined || t - cached.at >= RUN_GAUGES_TTL_MS) cached = { at: t, value: readRuns().catch(() => undefined) };
    return cached.value;
  };
  new Gauge({
    name: 'logdrain_workflow_runs', help: 'Workflow runs not ended, by status (shared store: every process reports the same; use max)', labelNames: ['status'], registers,
    async collect() {
      const c = await runCounts();
      this.reset();
      if (c === undefined) return;
      for (const status of OPEN_RUN_STATUSES) this.set({ status }, c.byStatus[status] ?? 0);
    },
  });
  new Gauge({
    name: 'logdrain_workflow_queue_depth', help: 'Workflow runs waiting for a claim: queued, or running under a lease that ran out', registers,
    async collect() {
      const c = await runCounts();
      this.reset();
      if (c !== undefined) this.set(c.claimable);
    },
  });
  new Gauge({
    name: 'logdrain_workflow_queue_oldest_age_seconds', help: 'How long the longest-waiting queued run has waited (0: none queued)', registers,
    async collect() {
      const c = await runCounts();
      this.reset();
      if (c !== undefined) this.set(c.oldestQueuedAt === null ? 0 : Math.max(0, (now() - c.oldestQueuedAt.getTime()) / 1000));
    },
  });

  return {
    workflowStepAttempt: (kind) => stepAttempts.inc({ step_kind: word(kind) }),
    workflowStepFailed: (kind) => stepFailures.inc({ step_kind: word(kind) }),
    workflowRunClaimed: (seconds) => claimLatency.observe(Math.max(0, seconds)),
    workflowNotification: (kind, outcome) => notifications.inc({ kind: word(kind), outcome: word(outcome) }),
    workflowRunsFrom(read) {
      readRuns = read;
      cached = undefined;
    },
    channelSend: (channel, status, n = 1) => sends.inc({ channel: word(channel), status: word(status) }, n),
    channelReceiptApplied: (status) => receipts.inc({ status: word(status) }),
    telephonyDispatch: (kind, outcome) => dispatches.inc({ kind: word(kind), outcome: word(outcome) }),
    voiceSessionCreated: () => sessions.inc(),
    telephonyVendorError: (port, errorClass) => vendorErrors.inc({ port: word(port), error_class: word(errorClass) }),
    skillInstallChanged: (action) => skillInstalls.inc({ action: word(action) }),
  };
}
