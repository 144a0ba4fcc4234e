/**
 * Configuration is read from the environment once, validated, and frozen. Nothing else in the code
 * base reads `process.env` (NODE_EXTRA_CA_CERTS aside, whose file content is read here too so the
 * delivery client can trust it in-process, not only in freshly started processes).
 *
 * The configuration is one schema (`configSchema`): per variable its kind, default, bounds and
 * description (src/config/env-schema.ts). The core settings are declared here; each family that has
 * settings of its own declares its slice beside its code (src/modules/<family>/config.ts) and gets
 * only that slice. docs/operations.md's variable table is tested against the schema
 * (test/unit/config/config-docs.test.ts).
 */
import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { allOrNone, bool, deepFreeze, int, list, oneOf, optionalStr, readEnv, requiredStr, str, type ConfigIssue, type DeepReadonly, type Env } from './env-schema.js';
import { channelsConfigSchema } from '../modules/channels/config.js';
import { drainsConfigSchema } from '../modules/drains/config.js';
import { templateDeploysConfigSchema } from '../modules/templates/config.js';
import { workflowsConfigSchema } from '../modules/workflows/config.js';

export type { ConfigIssue } from './env-schema.js';
export type { ChannelsConfig } from '../modules/channels/config.js';
export type { DrainsConfig } from '../modules/drains/config.js';
export type { WorkflowsConfig } from '../modules/workflows/config.js';

const HTTP_URL = { pattern: '^https?://[^\\s]+$' };
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const configSchema = Type.Object({
  host: str('HOST', '0.0.0.0', 'the REST API\'s listen address'),
  port: int('PORT', 8080, { min: 0, max: 65535 }, 'the REST API\'s port; `/metrics`, `/healthz`, `/readyz` are served there too'),
  metricsPort: int('METRICS_PORT', 9464, { min: 0, max: 65535 }, '`/metrics`, `/healthz`, `/readyz` listener of `logdrain worker`'),
  databaseUrl: optionalStr('DATABASE_URL', 'Postgres connection string; unset: embedded Postgres (PGlite) in `DATA_DIR`', {
    pattern: '^postgres(ql)?://', formMessage: 'DATABASE_URL must be a postgres:// or postgresql:// connection string',
  }),
  dataDir: str('DATA_DIR', './data', 'embedded store location; `memory://` keeps it in memory'),
  kafka: Type.Object({
    brokers: list('KAFKA_BROKERS', 'comma-separated bootstrap servers; unset: the embedded durable queue replaces the topic'),
    topic: str('KAFKA_TOPIC', 'agent-logs', 'source topic'),
    groupId: str('KAFKA_GROUP_ID', 'logdrain-workers', 'consumer group of the worker pool'),
    // A dead member's partitions move after the session timeout: shorter is faster failover, longer tolerates pauses.
    sessionTimeoutMs: int('KAFKA_SESSION_TIMEOUT_MS', 30_000, { min: 1000, max: 3_600_000 }, 'how long a silent worker keeps its partitions before the group moves them'),
    heartbeatIntervalMs: int('KAFKA_HEARTBEAT_INTERVAL_MS', 3000, { min: 100, max: 600_000 }, 'consumer heartbeat'),
    // Kafka answers a long poll as soon as records arrive; brokers that do not (the librdkafka mock:
    // measured, a fetch that finds nothing waits the whole time) add up to this much to every record's latency.
    fetchMaxWaitMs: int('KAFKA_FETCH_MAX_WAIT_MS', 50, { min: 10, max: 10_000 }, 'the longest a fetch waits on the broker when it has nothing new'),
  }),
  logDrainsEnabled: bool('LOG_DRAINS_ENABLED', true, '`false`: every drain route answers `404 DRAIN_NOT_FOUND`'),
  endpointAllowHosts: list('DRAIN_ENDPOINT_ALLOW_HOSTS', 'hosts exempt from the private-address rule of drain endpoints (local testing only; HTTPS still required)', { lowercase: true }),
  /** Read as the file's content (`extraCaCerts`). */
  extraCaCerts: optionalStr('NODE_EXTRA_CA_CERTS', 'extra trusted CA file; the delivery client reads it in-process too'),
  batch: Type.Object({
    maxRecords: int('BATCH_MAX_RECORDS', 1000, { min: 1, max: 100_000 }, 'records in a batch before it is sent'),
    maxBytes: int('BATCH_MAX_BYTES', 1_048_576, { min: 1024, max: 64 * 1_048_576 }, 'bytes of record JSON in a batch (before compression) before it is sent'),
    lingerMs: int('BATCH_LINGER_MS', 1000, { min: 0, max: 600_000 }, 'the longest a batch waits for more records'),
  }),
  /**
   * Opt-in batching across time for drains with many slow resources: a drain whose live batches
   * average fewer than `belowRecords` records (0: never) sends its records through the durable
   * backlog instead, delivered per resource in full batches every `lingerMs` (src/backlog/spill.ts).
   */
  spill: Type.Object({
    belowRecords: int('BATCH_SPILL_BELOW_RECORDS', 0, { min: 0, max: 100_000 }, 'a drain whose live batches average fewer records spills them through the backlog; `0`: never'),
    lingerMs: int('BATCH_SPILL_LINGER_MS', 30_000, { min: 1000, max: 3_600_000 }, 'time between a spilling drain\'s delivery rounds'),
  }),
  retry: Type.Object({
    baseMs: int('RETRY_BASE_MS', 500, { min: 1, max: 3_600_000 }, 'the first retry backoff (doubling each time)'),
    maxMs: int('RETRY_MAX_MS', 60_000, { min: 1, max: 86_400_000 }, 'the longest retry backoff'),
  }),
  /** The drain-wide brake (src/deliver/circuit.ts, docs/delivery.md "The circuit"). */
  circuit: Type.Object({
    openAfterFailures: int('CIRCUIT_OPEN_AFTER_FAILURES', 5, { min: 1, max: 1000 }, 'consecutive retryable failed attempts of a drain\'s batches that open its circuit (a 429 with `Retry-After` opens it at once)'),
    openBaseMs: int('CIRCUIT_OPEN_BASE_MS', 5000, { min: 10, max: 3_600_000 }, 'how long an opened circuit first holds a drain\'s sends (at least half of it, jittered; doubling after each failed probe) when no `Retry-After` asks for longer'),
    openMaxMs: int('CIRCUIT_OPEN_MAX_MS', 300_000, { min: 10, max: 86_400_000 }, 'the longest a circuit stays open before its probe, whatever `Retry-After` asks'),
  }),
  deliveryTimeoutMs: int('DELIVERY_TIMEOUT_MS', 10_000, { min: 1, max: 600_000 }, 'one delivery attempt\'s time limit'),
  bufferHorizonMs: int('BUFFER_HORIZON_MS', 21_600_000, { min: 1000 }, 'how long records stay parked before they are dropped'),
  shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 30_000, { min: 0, max: 3_600_000 }, 'graceful stop limit'),
  requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }, 'a request (headers and body) must arrive whole within this time, or its connection is cut'),
  seedFile: optionalStr('SEED_FILE', 'a seed file that `start` and `serve` apply before serving'),
  /** The LiveKit server of voice sessions; undefined: the in-process sandbox serves. */
  voiceMedia: allOrNone({
    url: requiredStr('VOICE_MEDIA_URL', 'the LiveKit server\'s base URL', { ...HTTP_URL, formMessage: 'VOICE_MEDIA_URL must be an http:// or https:// URL' }),
    apiKey: requiredStr('VOICE_MEDIA_API_KEY', 'the LiveKit server\'s API key'),
    apiSecret: requiredStr('VOICE_MEDIA_API_SECRET', 'the LiveKit server\'s API secret'),
  }, 'a LiveKit server needs all three'),
  voiceMediaTimeoutMs: int('VOICE_MEDIA_TIMEOUT_MS', 15_000, { min: 100, max: 15_000 }, 'bound of the voice session route\'s upstream call (spec 02 part 8)'),
  rcsBulkChecksPerMinute: int('RCS_BULK_CHECKS_PER_MIN', 10, { min: 1 }, 'RCS bulk capability checks an organization may run a minute'),
  /** The real model provider; undefined: the in-process sandbox serves. */
  modelProvider: allOrNone({
    baseUrl: requiredStr('MODEL_PROVIDER_URL', 'base URL of an OpenAI-compatible chat-completions API', { ...HTTP_URL, formMessage: 'MODEL_PROVIDER_URL must be an http:// or https:// URL' }),
    apiKey: requiredStr('MODEL_PROVIDER_API_KEY', 'the model provider\'s API key'),
    model: requiredStr('MODEL_PROVIDER_MODEL', 'the model asked'),
    timeoutMs: int('MODEL_PROVIDER_TIMEOUT_MS', 60_000, { min: 100, max: 600_000 }, 'a model call\'s time limit (no retries)'),
    maxOutputTokens: int('MODEL_PROVIDER_MAX_OUTPUT_TOKENS', 4096, { min: 16, max: 128_000 }, 'a model call\'s output bound'),
  }, 'a real model provider needs all three'),
  websiteFetchAllowHosts: list('WEBSITE_FETCH_ALLOW_HOSTS', 'hosts the website fetcher may reach whatever they resolve to (local testing; HTTPS still required)', { lowercase: true }),
  /** Read as the 32 bytes it encodes (`encryptionKey`). */
  encryptionKey: optionalStr('ENCRYPTION_KEY', 'base64 of 32 bytes; encrypts header values and signing secrets at rest; unset: a key kept in the store'),
  logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info', 'pino level'),
  /**
   * On Postgres, how old the shared count a rate-limit decision rests on may be before a request
   * waits for a reconcile (src/api/kernel/rate-limit.ts); 0: every request waits for one.
   */
  rateLimitSyncMs: int('RATE_LIMIT_SYNC_MS', 100, { min: 0, max: 10_000 }, 'on Postgres, how old the shared rate-limit count a request is decided on may be'),
  /**
   * Where no autovacuum keeps the planner's statistics (the embedded store; Postgres with
   * `autovacuum = off`), how often the store looks for tables that grew past them (src/store/statistics.ts).
   */
  storeAnalyzeIntervalMs: int('STORE_ANALYZE_INTERVAL_MS', 10_000, { min: 0, max: 3_600_000 }, 'on a store without autovacuum, how often tables grown past their planner statistics are analysed; `0`: never'),
  /** Read as what it names (`trustProxy`): see trustProxyOf. */
  trustProxy: optionalStr('TRUST_PROXY', 'which proxies\' `X-Forwarded-For` names the client (fastify `trustProxy`): `true` (every hop), a hop count, or comma-separated proxy addresses, CIDR ranges or `loopback`/`linklocal`/`uniquelocal`; unset or `false`: the socket\'s peer is the client. Per-address rate limits (the template catalog) key on it'),
  drainRefreshMs: int('DRAIN_REFRESH_MS', 2000, { min: 50, max: 600_000 }, 'how often a worker applies the quota ladder and reads the drain configuration version unasked'),
  /**
   * Workers rebuild their plans on the store's change notifications (Postgres LISTEN). Off behind a
   * pooler that cannot LISTEN (PgBouncer in transaction mode): routing stays correct, each fetch's
   * version read then finds the change itself.
   */
  drainConfigListen: bool('DRAIN_CONFIG_LISTEN', true, 'rebuild drain plans and pick up enqueued probes on the store\'s notifications (Postgres `LISTEN`)'),
  /** Daily quota of every drain (docs/delivery.md, Quota). */
  quota: Type.Object({
    eventsPerDay: int('DRAIN_QUOTA_EVENTS_PER_DAY', 10_000_000, { min: 1 }, 'each drain\'s daily quota of records'),
    bytesPerDay: int('DRAIN_QUOTA_BYTES_PER_DAY', 10 * 1024 ** 3, { min: 1 }, 'each drain\'s daily quota of bytes'),
  }),
  heartbeatIntervalMs: int('HEARTBEAT_INTERVAL_MS', 300_000, { min: 0 }, 'an idle delivering drain gets a `heartbeat` delivery after this long without one; `0`: never'),
  logRetentionDays: int('LOG_RETENTION_DAYS', 7, { min: 1, max: 3650 }, 'days of records the platform copy keeps for the log read routes'),
  logsReadPerMinute: int('LOGS_READ_RATE_LIMIT_PER_MIN', 120, { min: 1 }, 'requests a minute each credential may make to the log read routes'),
  metricsDrainLabels: bool('METRICS_DRAIN_LABELS', false, 'adds org_id and drain_id labels to the per-drain gauges (one series per drain)'),
  /** Read as the instant it names (`deprecatedScopesSunset`). */
  deprecatedScopesSunset: str('DEPRECATED_SCOPES_SUNSET', '2027-06-30T00:00:00Z', 'after this instant the deprecated scopes of the log read routes are refused (spec 01 part 5.6)', {
    pattern: '^\\d{4}-\\d{2}-\\d{2}(T[\\d:.]+(Z|[+-]\\d{2}:\\d{2}))?$', formMessage: 'DEPRECATED_SCOPES_SUNSET must be an ISO 8601 date or date-time',
  }),
  backlogPollMs: int('BACKLOG_POLL_MS', 1000, { min: 10, max: 600_000 }, 'how often the backlog pump looks for parked records to deliver or expire'),
  probePollMs: int('PROBE_POLL_MS', 1000, { min: 10, max: 600_000 }, 'how often a worker looks for enqueued probes (verify, test) when no notification woke it'),
  probeLeaseMs: int('PROBE_LEASE_MS', 30_000, { min: 100, max: 3_600_000 }, 'how long a worker\'s claim on a probe holds without renewal: a dead worker\'s probe is retaken after it'),
  replayPollMs: int('REPLAY_POLL_MS', 1000, { min: 10, max: 600_000 }, 'how often a worker looks for drain replays to run or resume'),
  replayLeaseMs: int('REPLAY_LEASE_MS', 30_000, { min: 100, max: 3_600_000 }, 'how long a worker\'s claim on a drain replay holds without renewal: a dead worker\'s replay is resumed by another after it'),
  /** The duty cycle of replays beside live records (src/backlog/replay-pacing.ts). */
  replayMaxSharePercent: int('REPLAY_MAX_SHARE_PERCENT', 20, { min: 1, max: 100 }, 'while live records flow, the share of a worker\'s time its drain replays may use, in percent; with none flowing replays run at full speed'),
  parkAfterAttempts: int('PARK_AFTER_ATTEMPTS', 3, { min: 1, max: 100 }, 'failed attempts of a live batch before its records are parked in the backlog'),
  maxInFlightRecords: int('MAX_IN_FLIGHT_RECORDS', 10_000, { min: 100, max: 10_000_000 }, 'upper bound on records taken from the source but not yet accounted for'),
  /** The scrub pool (src/shape/scrub-pool.ts). */
  scrub: Type.Object({
    budgetMs: int('SCRUB_BUDGET_MS', 2000, { min: 10, max: 60_000 }, 'how long one record\'s scrub in the pool may take before its text is withheld'),
    maxQueuedPerOrg: int('SCRUB_MAX_QUEUED_PER_ORG', 32, { min: 1, max: 10_000 }, 'heavy records one organization may queue in the scrub pool; past it they are parked and scrubbed as the backlog sends them'),
  }),
  /** See src/config/heap-growth.ts. */
  heapGrowingPercent: int('HEAP_GROWING_PERCENT', 100, { min: 0, max: 1000 }, 'how far V8 lets the heap grow past what a full collection left live before the next one, in percent; `0`: V8\'s own choice'),
  region: optionalStr('REGION', 'region name put in `cloud.region` of each batch resource'),
  /** The carrier adapter of the telephony routes (src/vendors/carrier/select.ts). */
  carrierAdapter: oneOf('TELEPHONY_CARRIER', ['sandbox'] as const, 'sandbox', 'the carrier adapter of the phone number and SIP trunk routes; `sandbox`: in-process, the only one of this build'),
  channels: channelsConfigSchema,
  workflows: workflowsConfigSchema,
  templateDeploys: templateDeploysConfigSchema,
  drains: drainsConfigSchema,
});

type Raw = Static<typeof configSchema>;

/** What the schema reads, with the values that are more than the variable's text made into what they mean. */
export type Config = DeepReadonly<Omit<Raw, 'kafka' | 'extraCaCerts' | 'encryptionKey' | 'deprecatedScopesSunset' | 'trustProxy'> & {
  /** Undefined without KAFKA_BROKERS: the embedded durable queue replaces the topic. */
  kafka: Raw['kafka'] | undefined;
  kafkaTopic: string;
  /** The content of the NODE_EXTRA_CA_CERTS file. */
  extraCaCerts?: string;
  /** ENCRYPTION_KEY decoded. */
  encryptionKey?: Buffer;
  deprecatedScopesSunset: Date;
  /** TRUST_PROXY read: `false` (the socket's peer is the client), `true` (every hop), a hop count, or the proxies' addresses and ranges. */
  trustProxy: boolean | number | string[];
}>;

export type ModelProviderConfig = NonNullable<Config['modelProvider']>;
export type VoiceMediaConfig = NonNullable<Config['voiceMedia']>;

/** The configuration cannot be used: `issues` names each variable at fault and what is wrong with it. */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly problems: readonly string[];
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(`invalid configuration:\n  ${issues.map((i) => i.message).join('\n  ')}`);
    this.problems = issues.map((i) => i.message);
  }
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; error: ConfigError };

/** Reads and checks the whole configuration: the frozen configuration, or every problem at once. */
export function parseConfig(env: Env = process.env): ConfigResult {
  const issues: ConfigIssue[] = [];
  const raw = readEnv(configSchema, env, issues) as Raw;
  const problem = (variable: string, kind: ConfigIssue['kind'], message: string) => issues.push({ variable, kind, message });

  let extraCaCerts: string | undefined;
  if (raw.extraCaCerts !== undefined) {
    try {
      extraCaCerts = readFileSync(raw.extraCaCerts, 'utf8');
    } catch (e) {
      problem('NODE_EXTRA_CA_CERTS', 'unreadable', `NODE_EXTRA_CA_CERTS cannot be read: ${(e as Error).message}`);
    }
  }
  let encryptionKey: Buffer | undefined;
  if (raw.encryptionKey !== undefined) {
    encryptionKey = Buffer.from(raw.encryptionKey, 'base64');
    if (encryptionKey.length !== 32) problem('ENCRYPTION_KEY', 'format', 'ENCRYPTION_KEY must be base64 of exactly 32 bytes');
  }
  const deprecatedScopesSunset = new Date(raw.deprecatedScopesSunset);
  if (Number.isNaN(deprecatedScopesSunset.getTime()) && !issues.some((i) => i.variable === 'DEPRECATED_SCOPES_SUNSET')) {
    problem('DEPRECATED_SCOPES_SUNSET', 'format', 'DEPRECATED_SCOPES_SUNSET must be an ISO 8601 date or date-time');
  }

  const trustProxy = trustProxyOf(raw.trustProxy);
  if (trustProxy === undefined) {
    problem('TRUST_PROXY', 'format', `TRUST_PROXY must be true, false, a hop count from 1 to 99, or comma-separated proxy addresses, CIDR ranges or loopback/linklocal/uniquelocal, got ${JSON.stringify(raw.trustProxy)}`);
  }

  if (raw.retry.maxMs < raw.retry.baseMs) problem('RETRY_MAX_MS', 'relation', 'RETRY_MAX_MS must be at least RETRY_BASE_MS');
  if (raw.circuit.openMaxMs < raw.circuit.openBaseMs) problem('CIRCUIT_OPEN_MAX_MS', 'relation', 'CIRCUIT_OPEN_MAX_MS must be at least CIRCUIT_OPEN_BASE_MS');
  if (raw.spill.belowRecords > raw.batch.maxRecords) problem('BATCH_SPILL_BELOW_RECORDS', 'relation', 'BATCH_SPILL_BELOW_RECORDS must be at most BATCH_MAX_RECORDS');
  // Spilled records wait a linger, then a round: well inside the horizon that drops parked records.
  if (raw.spill.belowRecords > 0 && raw.spill.lingerMs * 2 > raw.bufferHorizonMs) {
    problem('BATCH_SPILL_LINGER_MS', 'relation', 'BATCH_SPILL_LINGER_MS must be at most half of BUFFER_HORIZON_MS');
  }
  if (issues.length > 0) return { ok: false, error: new ConfigError(issues) };

  const config = {
    ...raw,
    kafka: raw.kafka.brokers.length > 0 ? raw.kafka : undefined,
    kafkaTopic: raw.kafka.topic,
    extraCaCerts,
    encryptionKey,
    deprecatedScopesSunset,
    trustProxy: trustProxy ?? false,
    voiceMedia: raw.voiceMedia === undefined ? undefined : { ...raw.voiceMedia, url: raw.voiceMedia.url.replace(/\/+$/, '') },
  };
  return { ok: true, config: deepFreeze(config) };
}

/** TRUST_PROXY's text as fastify's `trustProxy` takes it; undefined when it is none of the forms. */
function trustProxyOf(text: string | undefined): boolean | number | string[] | undefined {
  if (text === undefined || /^(false|no|off)$/i.test(text)) return false;
  if (/^(true|yes|on)$/i.test(text)) return true;
  if (/^\d{1,2}$/.test(text)) return Number(text) >= 1 ? Number(text) : undefined;
  const ranges = text.split(',').map((r) => r.trim()).filter((r) => r.length > 0);
  // An IPv4 or IPv6 address, optionally with a prefix length: the forms fastify's proxy-addr reads.
  const address = /^((\d{1,3}(\.\d{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)(\/\d{1,3})?|loopback|linklocal|uniquelocal)$/;
  return ranges.length > 0 && ranges.every((r) => address.test(r)) ? ranges : undefined;
}

/** As parseConfig, for the processes' start: a bad configuration is thrown (the CLI prints every problem and exits). */
export function loadConfig(env: Env = process.env): Config {
  const result = parseConfig(env);
  if (!result.ok) throw result.error;
  return result.config;
}
