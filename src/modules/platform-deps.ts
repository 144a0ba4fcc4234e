/**
 * What the API hands every family: each takes the part it needs (its own
 * `Deps` type is a subset of this, its configuration a slice of `config`).
 * Built once by src/server.ts.
 *
 * The store a family gets is the kernel's (store/kernel.ts): credentials, the audit log,
 * idempotency, rate limits, tenancy, units of work. The tables the delivery engine writes are
 * handed only to the families that serve them: the drain tables to drains, the platform log
 * copy's reads to logs.
 */
import type { Config } from '../config/config.js';
import type { KernelStore } from '../store/kernel.js';
import type { DrainTables } from './drains/tables/index.js';
import type { LogReads } from './logs/repository.js';
import type { Sql } from '../store/sql.js';
import type { UnitOfWork } from '../store/unit-of-work.js';
import type { Logger } from '../telemetry/logger.js';
import type { RateLimiter } from '../api/kernel/rate-limit.js';
import type { RecordSink } from '../source/sink.js';
import type { Vendors } from '../vendors/index.js';
import type { ReadCaches } from '../api/kernel/read-cache.js';

export interface PlatformDeps {
  config: Config;
  store: KernelStore;
  /** The drain tables, for the drains family only (.dependency-cruiser.cjs). */
  drainTables: DrainTables;
  /** The platform log copy's reads, for the logs family only. */
  logs: LogReads;
  logger: Logger;
  limiter: RateLimiter;
  /** Where accepted records go: the embedded queue or the Kafka topic. */
  sink: RecordSink;
  /** The vendors' ports (src/vendors/), their adapters chosen from configuration. */
  vendors: Vendors;
  /** Sends on the agent's channels for another family (the channels family's, built by the composition root). */
  channelNotifications: ChannelNotificationPort;
  /** The families' counters and gauges on the process's /metrics (src/telemetry/family-metrics.ts). */
  metrics: FamilyMetrics;
  /** The persona, workflows and skills families' parts of a template install (built by the composition root). */
  templatePorts: TemplatePorts;
  /** Read caches kept coherent with the families' units of work (api/kernel/read-cache.ts). */
  reads: ReadCaches;
}

/**
 * What the families count for the operator's /metrics: typed methods whose every label is a bounded
 * set (a kind, a status, an outcome, a vendor port), never an organization, agent, run or user id,
 * an address or text. Implemented by the telemetry (src/telemetry/family-metrics.ts), built by the
 * composition roots; families see only this port.
 */
export interface FamilyMetrics {
  /** A step attempt began (`kind`: the step's kind in the graph language). */
  workflowStepAttempt(kind: string): void;
  /** A step attempt failed (it is retried or parks the run). */
  workflowStepFailed(kind: string): void;
  /** An executor claimed a queued run after it waited `seconds` in `queued`. */
  workflowRunClaimed(seconds: number): void;
  /** A run-end notification's send settled (`retry`: failed, tried again later); an in-app one is recorded sent at the run's end, not sent, and not counted. */
  workflowNotification(kind: NotificationKind, outcome: NotificationOutcome): void;
  /** Where the run gauges are read at scrape time: the shared store's runs that have not ended. */
  workflowRunsFrom(read: () => Promise<WorkflowRunCounts>): void;
  /** A channel send recorded (`n` deliveries: a template trigger records one per recipient). */
  channelSend(channel: string, status: string, n?: number): void;
  /** A vendor receipt moved a delivery to `status`. */
  channelReceiptApplied(status: string): void;
  /** A voice agent dispatch ended. */
  telephonyDispatch(kind: DispatchKind, outcome: DispatchOutcome): void;
  /** A developer voice session was opened on the media server. */
  voiceSessionCreated(): void;
  /** A telephony vendor port's call failed. */
  telephonyVendorError(port: TelephonyVendorPort, errorClass: VendorErrorClass): void;
  /** A marketplace skill install was created, changed or removed. */
  skillInstallChanged(action: SkillInstallAction): void;
}

export const NOTIFICATION_KINDS = ['email', 'app', 'target', 'callback'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];
export const NOTIFICATION_OUTCOMES = ['sent', 'failed', 'skipped', 'retry'] as const;
export type NotificationOutcome = (typeof NOTIFICATION_OUTCOMES)[number];
/** The run statuses that have not ended, each a series of the runs gauge. */
export const OPEN_RUN_STATUSES = ['queued', 'gated', 'running', 'suspended'] as const;
export const DISPATCH_KINDS = ['phone', 'meet', 'web'] as const;
export type DispatchKind = (typeof DISPATCH_KINDS)[number];
/** `placed`: the call is out; `vendor_failed`: the voice port failed it; `rate_limited`: the agent's dispatch limit refused it. */
export const DISPATCH_OUTCOMES = ['placed', 'vendor_failed', 'rate_limited'] as const;
export type DispatchOutcome = (typeof DISPATCH_OUTCOMES)[number];
export const TELEPHONY_VENDOR_PORTS = ['carrier', 'rcs', 'voice_calls', 'media'] as const;
export type TelephonyVendorPort = (typeof TELEPHONY_VENDOR_PORTS)[number];
/** `rejected`: the vendor refused the request; `unavailable`: it could not be reached or answered 5xx; `error`: anything else thrown. */
export const VENDOR_ERROR_CLASSES = ['rejected', 'unavailable', 'error'] as const;
export type VendorErrorClass = (typeof VENDOR_ERROR_CLASSES)[number];
export const SKILL_INSTALL_ACTIONS = ['install', 'update', 'uninstall'] as const;
export type SkillInstallAction = (typeof SKILL_INSTALL_ACTIONS)[number];

/** The runs that have not ended, read from the shared store for the run gauges. */
export interface WorkflowRunCounts {
  /** Runs by status (`OPEN_RUN_STATUSES`). */
  byStatus: Record<string, number>;
  /** Runs waiting for an executor's claim: queued, and running under a lease that ran out. */
  claimable: number;
  /** When the longest-waiting queued run entered `queued`; null when none is. */
  oldestQueuedAt: Date | null;
}

/**
 * What the channels family offers the other families: a message (a workflow run's end summary,
 * contract W8) sent to a channels recipient of the agent and recorded as a delivery with `origin:
 * notification`. Families never import each other; this port is how workflows reaches channels.
 */
export interface ChannelNotificationPort {
  send(n: ChannelNotification): Promise<ChannelNotificationOutcome>;
}

export interface ChannelNotification {
  orgId: string;
  agentId: string;
  /** The channel to send on; undefined: the thread's own (`workchat` for a conversation, else the channel the end user last wrote on). */
  channel: 'chatapp' | 'sms' | 'email' | 'webchat' | undefined;
  /** A channels recipient of the agent: an end user's id, or a `workchat` conversation id. */
  thread: string;
  /** The subject of an email send (other channels send `text` alone). */
  subject: string;
  text: string;
  /**
   * The delivery record's id, chosen by the caller: a send under an id already recorded sends
   * nothing and answers that delivery (a caller that died after the send and before it noted the
   * outcome finds it so).
   */
  deliveryId: string;
}

export type ChannelNotificationOutcome =
  /** Recorded and handed to the vendor (`status` accepted), or queued for a closed chat-app window. */
  | { kind: 'sent'; channel: string; deliveryId: string; status: string }
  /** The vendor refused it: recorded as a failed delivery; `retryable` as the vendor's failure says. */
  | { kind: 'failed'; channel: string; deliveryId: string; retryable: boolean; error: { code: string; message: string } }
  /** The recipient rules refuse it (unknown thread, a channel the recipient cannot be reached on): nothing sent or recorded. */
  | { kind: 'refused'; channel: string | null; error: { code: string; message: string } };

/**
 * What the templates family reaches in other families when it installs or deploys a template
 * (spec 03 part 2.5 install result): a persona applied, workflows read and started, marketplace
 * skills installed. Each write runs on the caller's unit of work (`tx`), so an install and
 * everything it does in other families commit together or not at all. Built by the composition
 * root from each family's implementation.
 */
export interface TemplatePorts {
  persona: PersonaApplyPort;
  workflows: WorkflowTemplatePort;
  skills: SkillInstallPort;
}

/** Who a port call acts for: the user recorded as author (a key's owner, a session's person). */
export interface PortActor {
  orgId: string;
  userId: string;
}

export interface PersonaApplyPort {
  /**
   * Makes `persona` the agent's current persona as a new published version. Without `overwrite`,
   * an agent that already serves a persona keeps it (`applied: false`).
   */
  apply(tx: UnitOfWork, a: PortActor & { agentId: string; persona: string | Record<string, unknown>; overwrite: boolean }): Promise<PersonaApplyOutcome>;
  /**
   * A digest of the agent's current persona (null: none): the same for the same persona content,
   * whichever version serves it. An install records it after applying a persona, and compares it
   * before the next apply to see whether the agent changed the persona since (MODIFIED_SINCE_INSTALL).
   */
  digest(sql: Sql, agentId: string): Promise<string | null>;
}

export type PersonaApplyOutcome = { applied: true; version: number } | { applied: false; reason: 'persona-exists' };

/** A deployed workflow of an agent as a template version freezes it (spec 03 part 2.5 manifest `workflows[]`). */
export interface WorkflowSnapshot {
  key: string;
  workflowId: string;
  displayName: string;
  description?: string;
  version: string;
  form: 'graph' | 'script';
  stepCount: number;
  hasApproval: boolean;
  hasSchedule: boolean;
  hasSignalWait: boolean;
  hasJobTier: boolean;
  inputSchema?: unknown;
}

export interface WorkflowTemplatePort {
  /** The agent's deployed workflows that have an active version, by name. */
  snapshot(sql: Sql, agentId: string): Promise<WorkflowSnapshot[]>;
  /** Starts a run of the agent's workflow `workflowName` with trigger `template`. */
  start(tx: UnitOfWork, s: PortActor & { agentId: string; workflowName: string; input?: unknown }): Promise<WorkflowStartOutcome>;
  /** Moves the agent's in-flight runs of `workflowNames` (all when omitted) onto each workflow's active version. */
  migrateRuns(tx: UnitOfWork, m: PortActor & { agentId: string; workflowNames?: readonly string[]; strategy: 'resume-on-new' | 'cancel-and-reseed'; onIncompatible: 'leave' | 'cancel'; include: 'suspended' | 'all'; reason?: string }): Promise<RunMigration>;
  /** Tells the executor runs were queued (after the unit of work that started them committed). */
  wake(): void;
}

export type WorkflowStartOutcome =
  | { outcome: 'started'; runId: string; status: string }
  /** The agent has no such workflow, or none with an active version. */
  | { outcome: 'not-found' }
  | { outcome: 'refused'; code: string; message: string };

export interface RunMigration {
  migrationIds: string[];
  /** Runs repinned (`resumed`), cancelled, started anew (`reseeded`), left on their version. */
  counts: { resumed: number; cancelled: number; reseeded: number; left: number };
  /** Runs left because their version's steps do not fit the active version's (`onIncompatible: leave`). */
  skipped: string[];
}

export interface SkillInstallPort {
  /** Installs a marketplace skill on the agent (its published version `version`, default the newest); an install already there is kept. */
  install(tx: UnitOfWork, i: PortActor & { agentId: string; skillId: string; version?: string; envValues?: Record<string, string> }): Promise<SkillInstallOutcome>;
}

export type SkillInstallOutcome =
  | { outcome: 'installed'; version: string }
  | { outcome: 'already-installed'; version: string }
  | { outcome: 'refused'; code: string; message: string };
