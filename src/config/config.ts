/**
 * Configuration is read from the environment once, validated, and frozen.
 * Nothing else in the code base reads `process.env` (NODE_EXTRA_CA_CERTS aside,
 * whose file content is read here too so the delivery client can trust it
 * in-process, not only in freshly started processes).
 */
import { readFileSync } from 'node:fs';
import { DRAIN_TYPES } from '../destinations/index.js';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly metricsPort: number;
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly topic: string;
    readonly groupId: string;
    readonly sessionTimeoutMs: number;
    readonly heartbeatIntervalMs: number;
    readonly fetchMaxWaitMs: number;
  } | undefined;
  readonly kafkaTopic: string;
  readonly logDrainsEnabled: boolean;
  readonly endpointAllowHosts: readonly string[];
  readonly extraCaCerts: string | undefined;
  readonly vendorAIntakeUrl: string;
  /** Host names (or suffixes starting with '.') a `vendor-b` endpoint may use. */
  readonly vendorBHosts: readonly string[];
  /** Drain types this deployment offers; others answer DRAIN_TYPE_UNAVAILABLE. */
  readonly drainTypesEnabled: readonly string[];
  readonly batch: { readonly maxRecords: number; readonly maxBytes: number; readonly lingerMs: number };
  /**
   * Opt-in batching across time for drains with many slow resources: a drain whose live batches
   * average fewer than `belowRecords` records (0: never) sends its records through the durable
   * backlog instead, delivered per resource in full batches every `lingerMs` (src/backlog/spill.ts).
   */
  readonly spill: { readonly belowRecords: number; readonly lingerMs: number };
  readonly retry: { readonly baseMs: number; readonly maxMs: number };
  readonly deliveryTimeoutMs: number;
  readonly bufferHorizonMs: number;
  readonly shutdownTimeoutMs: number;
  /** A request (headers and body) must arrive whole within this time, or its connection is cut. */
  readonly requestTimeoutMs: number;
  readonly seedFile: string | undefined;
  /** The LiveKit server of voice sessions (VOICE_MEDIA_*); undefined: the in-process sandbox serves. */
  readonly voiceMedia: VoiceMediaConfig | undefined;
  /** Bound of the session route's upstream call (VOICE_MEDIA_TIMEOUT_MS, default 15000: spec 02 part 8). */
  readonly voiceMediaTimeoutMs: number;
  /** RCS bulk capability checks an organization may run a minute (RCS_BULK_CHECKS_PER_MIN, default 10). */
  readonly rcsBulkChecksPerMinute: number;
  /** The real model provider (MODEL_PROVIDER_*); undefined: the in-process sandbox serves. */
  readonly modelProvider: ModelProviderConfig | undefined;
  /** Hosts the website fetcher may reach whatever they resolve to (local testing; HTTPS still required). */
  readonly websiteFetchAllowHosts: readonly string[];
  /** Base64 of 32 bytes; encrypts header values and signing secrets at rest. Unset: a key kept in the store. */
  readonly encryptionKey: Buffer | undefined;
  readonly logLevel: string;
  /** Drain route budgets per organization and minute (spec 01 part 8: 300 reads, 60 mutations). */
  readonly drainRateLimits: { readonly readPerMinute: number; readonly mutatePerMinute: number };
  /**
   * On Postgres, how old the shared count a rate-limit decision rests on may be before a request
   * waits for a reconcile (src/api/kernel/rate-limit.ts); 0: every request waits for one.
   */
  readonly rateLimitSyncMs: number;
  /**
   * TRUST_PROXY: which proxies' X-Forwarded-For names the client (fastify's `trustProxy`): `false`
   * (unset: the socket's peer is the client), `true` (every hop), a hop count, or the proxies'
   * addresses and CIDR ranges. Per-address rate limits (the template catalog) key on the result.
   */
  readonly trustProxy: boolean | number | readonly string[];
  /** How often a worker applies the quota ladder and reads the drain configuration version unasked. */
  readonly drainRefreshMs: number;
  /**
   * Workers rebuild their plans on the store's change notifications (Postgres LISTEN). Off behind a
   * pooler that cannot LISTEN (PgBouncer in transaction mode): routing stays correct, each fetch's
   * version read then finds the change itself.
   */
  readonly drainConfigListen: boolean;
  /** Daily quota of every drain (docs/delivery.md, Quota). */
  readonly quota: { readonly eventsPerDay: number; readonly bytesPerDay: number };
  /** An idle delivering drain gets a `heartbeat` delivery after this long without one; 0: never. */
  readonly heartbeatIntervalMs: number;
  /** Days of records the platform copy keeps for the log read routes. */
  readonly logRetentionDays: number;
  /** Adds org_id and drain_id labels to the per-drain gauges (opt-in: one series per drain). */
  readonly metricsDrainLabels: boolean;
  /** Requests a minute each credential may make to the log read routes. */
  readonly logsReadPerMinute: number;
  /** After this instant the deprecated scopes of the log read routes are refused (spec 01 part 5.6). */
  readonly deprecatedScopesSunset: Date;
  /** How often the backlog pump looks for parked records to deliver or expire. */
  readonly backlogPollMs: number;
  /** How often a worker looks for enqueued probes (verify, test) when no notification woke it. */
  readonly probePollMs: number;
  /** How long a worker's claim on a probe holds without renewal: a dead worker's probe is retaken after it. */
  readonly probeLeaseMs: number;
  /** Failed attempts of a live batch before its records are parked in the backlog. */
  readonly parkAfterAttempts: number;
  /** Upper bound on records taken from the source but not yet accounted for. */
  readonly maxInFlightRecords: number;
  /**
   * How far V8 lets the heap grow past what a full collection left live before the next one, in
   * percent (0: V8's own choice, up to 300% at full speed). See src/config/heap-growth.ts.
   */
  readonly heapGrowingPercent: number;
  /** Region name put in `cloud.region` of each batch resource, when set. */
  readonly region: string | undefined;
  /** The carrier adapter of the telephony routes (src/vendors/carrier/select.ts); `sandbox` in-process. */
  readonly carrierAdapter: 'sandbox';
  /** Channel sends (docs/api-channels.md): the mail adapter, attachment fetching, the status sweep, the sandbox receipts. */
  readonly channels: ChannelsConfig;
  /** The workflow runtime (docs/api-workflows.md): cancel escalation and the executor this process runs. */
  readonly workflows: WorkflowsConfig;
}

export interface WorkflowsConfig {
  /** WORKFLOW_FORCE_CANCEL_AFTER_MS: from a cancel request to `forceAvailableAt`. */
  readonly forceCancelAfterMs: number;
  /** WORKFLOW_EXECUTOR: whether this process (`start`, `serve` or `worker`) runs a workflow executor (`false`: an API only serves the routes). */
  readonly executor: boolean;
  /** WORKFLOW_LEASE_MS: how long an executor holds a run without renewing; a dead executor's runs are taken over after it. */
  readonly leaseMs: number;
  /** WORKFLOW_POLL_MS: how often an idle executor looks for runs started by other processes. */
  readonly pollMs: number;
  /** WORKFLOW_EXECUTOR_SLOTS: runs one executor executes at a time. */
  readonly slots: number;
  /** WORKFLOW_RATE_LIMIT_{READ,START,BATCH,MUTATE}_PER_MIN: the wf-read, wf-start, wf-batch and wf-mutate buckets (spec 03 part 8: 600, 30, 5, 60). */
  readonly rateLimits: { readonly read: number; readonly start: number; readonly batch: number; readonly mutate: number };
  /** The run-end notification sender beside each executor (docs/api-workflows.md, notifications). */
  readonly notify: {
    /** WORKFLOW_NOTIFY_LEASE_MS: how long a sender holds a notification it claimed; a dead sender's are sent by another after it. */
    readonly leaseMs: number;
    /** WORKFLOW_NOTIFY_RETRY_BASE_MS, WORKFLOW_NOTIFY_RETRY_MAX_MS: the backoff after a vendor failure (doubling from base, at most max). */
    readonly retryBaseMs: number;
    readonly retryMaxMs: number;
    /** WORKFLOW_NOTIFY_MAX_ATTEMPTS: sends tried before a notification is recorded failed. */
    readonly maxAttempts: number;
  };
}

export interface ChannelsConfig {
  /** EMAIL_SMTP_URL: `smtp://` or `smtps://` (credentials in the URL) selects the SMTP adapter; unset, the sandbox. */
  readonly smtpUrl: string | undefined;
  /** EMAIL_FROM: the sender of every email. */
  readonly emailFrom: string;
  /** ATTACHMENT_FETCH_ALLOW_HOSTS: exempt from the private-address rule (local testing only; HTTPS still required). */
  readonly attachmentAllowHosts: readonly string[];
  /** The longest all of one email's attachments may take to fetch. */
  readonly attachmentTimeoutMs: number;
  /** A delivery queued for a closed chat-app window expires after this long without the end user writing. */
  readonly queueExpiryMs: number;
  /** How often the status sweep runs (0: never; tests call it themselves). */
  readonly sweepIntervalMs: number;
  /** The sandbox vendors' time between one receipt and the next (contract: within 2 seconds). */
  readonly sandboxReceiptStepMs: number;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

type Env = Record<string, string | undefined>;

export interface ModelProviderConfig {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxOutputTokens: number;
}

export interface VoiceMediaConfig {
  /** The server's base URL, https:// or http://. */
  url: string;
  apiKey: string;
  apiSecret: string;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const v = env[name];
    return v === undefined || v === '' ? fallback : v;
  };
  const optional = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (/^(true|1|yes|on)$/i.test(raw)) return true;
    if (/^(false|0|no|off)$/i.test(raw)) return false;
    problems.push(`${name} must be true or false, got ${JSON.stringify(raw)}`);
    return fallback;
  };
  const list = (name: string): string[] =>
    (env[name] ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);

  const trustProxy = (): boolean | number | string[] => {
    const raw = optional('TRUST_PROXY');
    if (raw === undefined) return false;
    if (/^(true|yes|on)$/i.test(raw)) return true;
    if (/^(false|no|off)$/i.test(raw)) return false;
    if (/^\d{1,2}$/.test(raw)) {
      const hops = Number(raw);
      if (hops >= 1) return hops;
    }
    const ranges = list('TRUST_PROXY');
    // An IPv4 or IPv6 address, optionally with a prefix length: the forms fastify's proxy-addr reads.
    const address = /^((\d{1,3}(\.\d{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)(\/\d{1,3})?|loopback|linklocal|uniquelocal)$/;
    const bad = ranges.filter((r) => !address.test(r));
    if (bad.length > 0) {
      problems.push(`TRUST_PROXY must be true, false, a hop count from 1 to 99, or comma-separated proxy addresses, CIDR ranges or loopback/linklocal/uniquelocal, got ${JSON.stringify(raw)}`);
      return false;
    }
    return ranges;
  };

  const carrierAdapter = (): 'sandbox' => {
    const v = str('TELEPHONY_CARRIER', 'sandbox');
    if (v !== 'sandbox') problems.push(`TELEPHONY_CARRIER must be sandbox (the only carrier adapter of this build), got ${JSON.stringify(v)}`);
    return 'sandbox';
  };

  const databaseUrl = optional('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// connection string');
  }

  const brokers = list('KAFKA_BROKERS');
  const kafkaTopic = str('KAFKA_TOPIC', 'agent-logs');
  const groupId = str('KAFKA_GROUP_ID', 'logdrain-workers');
  // A dead member's partitions move after the session timeout: shorter is faster failover, longer tolerates pauses.
  const sessionTimeoutMs = int('KAFKA_SESSION_TIMEOUT_MS', 30_000, 1000, 3_600_000);
  const heartbeatIntervalMs = int('KAFKA_HEARTBEAT_INTERVAL_MS', 3000, 100, 600_000);
  // The longest a fetch waits on the broker when it has nothing new. Kafka answers a long poll as
  // soon as records arrive; brokers that do not (the librdkafka mock: measured, a fetch that finds
  // nothing waits the whole time) add up to this much to every record's latency.
  const fetchMaxWaitMs = int('KAFKA_FETCH_MAX_WAIT_MS', 50, 10, 10_000);

  const caPath = optional('NODE_EXTRA_CA_CERTS');
  let extraCaCerts: string | undefined;
  if (caPath !== undefined) {
    try {
      extraCaCerts = readFileSync(caPath, 'utf8');
    } catch (e) {
      problems.push(`NODE_EXTRA_CA_CERTS cannot be read: ${(e as Error).message}`);
    }
  }

  let encryptionKey: Buffer | undefined;
  const rawKey = optional('ENCRYPTION_KEY');
  if (rawKey !== undefined) {
    encryptionKey = Buffer.from(rawKey, 'base64');
    if (encryptionKey.length !== 32) problems.push('ENCRYPTION_KEY must be base64 of exactly 32 bytes');
  }

  const vendorAIntakeUrl = str('VENDOR_A_INTAKE_URL', 'https://http-intake.logs.{site}/api/v2/logs');
  if (!vendorAIntakeUrl.includes('{site}') && !/^https:\/\//.test(vendorAIntakeUrl)) {
    problems.push('VENDOR_A_INTAKE_URL must be an https URL template');
  }

  const drainTypesEnabled = env.DRAIN_TYPES_ENABLED === undefined ? [...DRAIN_TYPES] : list('DRAIN_TYPES_ENABLED');
  for (const t of drainTypesEnabled) {
    if (!(DRAIN_TYPES as readonly string[]).includes(t)) problems.push(`DRAIN_TYPES_ENABLED: unknown type ${t}`);
  }
  const vendorBHosts = env.VENDOR_B_HOSTS === undefined ? ['.logs.vendor-b.com'] : list('VENDOR_B_HOSTS').map((h) => h.toLowerCase());

  const logLevel = str('LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }

  const sunsetRaw = str('DEPRECATED_SCOPES_SUNSET', '2027-06-30T00:00:00Z');
  const deprecatedScopesSunset = new Date(sunsetRaw);
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(sunsetRaw) || Number.isNaN(deprecatedScopesSunset.getTime())) {
    problems.push('DEPRECATED_SCOPES_SUNSET must be an ISO 8601 date or date-time');
  }

  // The real model provider: all three of URL, key and model, or none (the sandbox).
  const providerVars = ['MODEL_PROVIDER_URL', 'MODEL_PROVIDER_API_KEY', 'MODEL_PROVIDER_MODEL'] as const;
  const providerSet = providerVars.filter((n) => optional(n) !== undefined);
  if (providerSet.length > 0 && providerSet.length < 3) {
    problems.push(`${providerVars.filter((n) => !providerSet.includes(n)).join(', ')} must be set with ${providerSet.join(', ')} (a real model provider needs all three)`);
  }
  const providerUrl = optional('MODEL_PROVIDER_URL');
  if (providerUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(providerUrl)) problems.push('MODEL_PROVIDER_URL must be an http:// or https:// URL');
  const modelProvider: ModelProviderConfig | undefined = providerSet.length === 3
    ? {
        baseUrl: providerUrl!,
        apiKey: optional('MODEL_PROVIDER_API_KEY')!,
        model: optional('MODEL_PROVIDER_MODEL')!,
        timeoutMs: int('MODEL_PROVIDER_TIMEOUT_MS', 60_000, 100, 600_000),
        maxOutputTokens: int('MODEL_PROVIDER_MAX_OUTPUT_TOKENS', 4096, 16, 128_000),
      }
    : undefined;
  // The LiveKit server of voice sessions: all three of URL, key and secret, or none (the sandbox).
  const mediaVars = ['VOICE_MEDIA_URL', 'VOICE_MEDIA_API_KEY', 'VOICE_MEDIA_API_SECRET'] as const;
  const mediaSet = mediaVars.filter((n) => optional(n) !== undefined);
  if (mediaSet.length > 0 && mediaSet.length < 3) {
    problems.push(`${mediaVars.filter((n) => !mediaSet.includes(n)).join(', ')} must be set with ${mediaSet.join(', ')} (a LiveKit server needs all three)`);
  }
  const mediaUrl = optional('VOICE_MEDIA_URL');
  if (mediaUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(mediaUrl)) problems.push('VOICE_MEDIA_URL must be an http:// or https:// URL');
  const voiceMedia: VoiceMediaConfig | undefined = mediaSet.length === 3
    ? { url: mediaUrl!.replace(/\/+$/, ''), apiKey: optional('VOICE_MEDIA_API_KEY')!, apiSecret: optional('VOICE_MEDIA_API_SECRET')! }
    : undefined;
  const voiceMediaTimeoutMs = int('VOICE_MEDIA_TIMEOUT_MS', 15_000, 100, 15_000);
  const smtpUrl = optional('EMAIL_SMTP_URL');
  if (smtpUrl !== undefined && !/^smtps?:\/\/[^/]/.test(smtpUrl)) problems.push('EMAIL_SMTP_URL must be an smtp:// or smtps:// URL');
  const emailFrom = str('EMAIL_FROM', 'no-reply@logdrain.invalid');
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(emailFrom) && !/^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(emailFrom)) problems.push('EMAIL_FROM must be an email address (optionally "Name <address>")');

  const config: Config = {
    host: str('HOST', '0.0.0.0'),
    port: int('PORT', 8080, 0, 65535),
    metricsPort: int('METRICS_PORT', 9464, 0, 65535),
    databaseUrl,
    dataDir: str('DATA_DIR', './data'),
    kafka: brokers.length > 0 ? { brokers, topic: kafkaTopic, groupId, sessionTimeoutMs, heartbeatIntervalMs, fetchMaxWaitMs } : undefined,
    kafkaTopic,
    logDrainsEnabled: bool('LOG_DRAINS_ENABLED', true),
    endpointAllowHosts: list('DRAIN_ENDPOINT_ALLOW_HOSTS').map((h) => h.toLowerCase()),
    extraCaCerts,
    vendorAIntakeUrl,
    vendorBHosts,
    drainTypesEnabled,
    batch: {
      maxRecords: int('BATCH_MAX_RECORDS', 1000, 1, 100_000),
      maxBytes: int('BATCH_MAX_BYTES', 1_048_576, 1024, 64 * 1_048_576),
      lingerMs: int('BATCH_LINGER_MS', 1000, 0, 600_000),
    },
    spill: {
      belowRecords: int('BATCH_SPILL_BELOW_RECORDS', 0, 0, 100_000),
      lingerMs: int('BATCH_SPILL_LINGER_MS', 30_000, 1000, 3_600_000),
    },
    retry: {
      baseMs: int('RETRY_BASE_MS', 500, 1, 3_600_000),
      maxMs: int('RETRY_MAX_MS', 60_000, 1, 86_400_000),
    },
    deliveryTimeoutMs: int('DELIVERY_TIMEOUT_MS', 10_000, 1, 600_000),
    bufferHorizonMs: int('BUFFER_HORIZON_MS', 21_600_000, 1000),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 30_000, 0, 3_600_000),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    seedFile: optional('SEED_FILE'),
    modelProvider,
    voiceMedia,
    voiceMediaTimeoutMs,
    rcsBulkChecksPerMinute: int('RCS_BULK_CHECKS_PER_MIN', 10, 1),
    websiteFetchAllowHosts: list('WEBSITE_FETCH_ALLOW_HOSTS').map((h) => h.toLowerCase()),
    encryptionKey,
    logLevel,
    drainRateLimits: {
      readPerMinute: int('DRAIN_RATE_LIMIT_READ_PER_MIN', 300, 1),
      mutatePerMinute: int('DRAIN_RATE_LIMIT_MUTATE_PER_MIN', 60, 1),
    },
    rateLimitSyncMs: int('RATE_LIMIT_SYNC_MS', 100, 0, 10_000),
    trustProxy: trustProxy(),
    drainRefreshMs: int('DRAIN_REFRESH_MS', 2000, 50, 600_000),
    drainConfigListen: bool('DRAIN_CONFIG_LISTEN', true),
    quota: {
      eventsPerDay: int('DRAIN_QUOTA_EVENTS_PER_DAY', 10_000_000, 1),
      bytesPerDay: int('DRAIN_QUOTA_BYTES_PER_DAY', 10 * 1024 ** 3, 1),
    },
    heartbeatIntervalMs: int('HEARTBEAT_INTERVAL_MS', 300_000, 0),
    logRetentionDays: int('LOG_RETENTION_DAYS', 7, 1, 3650),
    logsReadPerMinute: int('LOGS_READ_RATE_LIMIT_PER_MIN', 120, 1),
    metricsDrainLabels: bool('METRICS_DRAIN_LABELS', false),
    deprecatedScopesSunset,
    backlogPollMs: int('BACKLOG_POLL_MS', 1000, 10, 600_000),
    probePollMs: int('PROBE_POLL_MS', 1000, 10, 600_000),
    probeLeaseMs: int('PROBE_LEASE_MS', 30_000, 100, 3_600_000),
    parkAfterAttempts: int('PARK_AFTER_ATTEMPTS', 3, 1, 100),
    maxInFlightRecords: int('MAX_IN_FLIGHT_RECORDS', 20_000, 100, 10_000_000),
    heapGrowingPercent: int('HEAP_GROWING_PERCENT', 100, 0, 1000),
    region: optional('REGION'),
    carrierAdapter: carrierAdapter(),
    channels: {
      smtpUrl,
      emailFrom,
      attachmentAllowHosts: list('ATTACHMENT_FETCH_ALLOW_HOSTS').map((h) => h.toLowerCase()),
      attachmentTimeoutMs: int('ATTACHMENT_FETCH_TIMEOUT_MS', 30_000, 100, 600_000),
      queueExpiryMs: int('CHANNEL_QUEUE_EXPIRY_MS', 7 * 86_400_000, 1000),
      sweepIntervalMs: int('CHANNEL_SWEEP_INTERVAL_MS', 60_000, 0, 86_400_000),
      sandboxReceiptStepMs: int('SANDBOX_RECEIPT_STEP_MS', 500, 1, 2000),
    },
    workflows: {
      forceCancelAfterMs: int('WORKFLOW_FORCE_CANCEL_AFTER_MS', 60_000, 0, 86_400_000),
      executor: bool('WORKFLOW_EXECUTOR', true),
      leaseMs: int('WORKFLOW_LEASE_MS', 30_000, 100, 3_600_000),
      pollMs: int('WORKFLOW_POLL_MS', 500, 10, 60_000),
      slots: int('WORKFLOW_EXECUTOR_SLOTS', 8, 1, 1000),
      rateLimits: {
        read: int('WORKFLOW_RATE_LIMIT_READ_PER_MIN', 600, 1),
        start: int('WORKFLOW_RATE_LIMIT_START_PER_MIN', 30, 1),
        batch: int('WORKFLOW_RATE_LIMIT_BATCH_PER_MIN', 5, 1),
        mutate: int('WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN', 60, 1),
      },
      notify: {
        leaseMs: int('WORKFLOW_NOTIFY_LEASE_MS', 120_000, 100, 3_600_000),
        retryBaseMs: int('WORKFLOW_NOTIFY_RETRY_BASE_MS', 2000, 10, 3_600_000),
        retryMaxMs: int('WORKFLOW_NOTIFY_RETRY_MAX_MS', 300_000, 10, 86_400_000),
        maxAttempts: int('WORKFLOW_NOTIFY_MAX_ATTEMPTS', 8, 1, 100),
      },
    },
  };
  if (config.retry.maxMs < config.retry.baseMs) problems.push('RETRY_MAX_MS must be at least RETRY_BASE_MS');
  if (config.spill.belowRecords > config.batch.maxRecords) problems.push('BATCH_SPILL_BELOW_RECORDS must be at most BATCH_MAX_RECORDS');
  // Spilled records wait a linger, then a round: well inside the horizon that drops parked records.
  if (config.spill.belowRecords > 0 && config.spill.lingerMs * 2 > config.bufferHorizonMs) problems.push('BATCH_SPILL_LINGER_MS must be at most half of BUFFER_HORIZON_MS');
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value as object)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
