/**
 * The worker's view of drain configuration: every live drain compiled once
 * per configuration version into a DrainPlan (selector, shaping options,
 * encoder, opened headers and signing keys). The registry reloads when the
 * store's configuration fingerprint changes, so every worker notices edits
 * within DRAIN_REFRESH_MS.
 */
import { isDeliverable, isVerifiedForEndpoint, type Drain, type ScrubRule } from '../model/drain.js';
import { compileSelector, type Selector } from '../select/selector.js';
import type { ShapeOptions } from '../shape/delivered-record.js';
import { compileScrubber, type Scrubber } from '../shape/scrubber.js';
import { otlpEncoder } from '../encode/otlp.js';
import type { Encoder } from '../encode/encoder.js';
import { jsonEncoder } from '../encode/json.js';
import { ndjsonEncoder } from '../encode/ndjson.js';
import { vendorAEncoder, vendorBEncoder } from '../encode/vendors.js';
import { sharedEncoding } from '../encode/shared-encoding.js';
import { signingKey } from '../sign/standard-webhooks.js';
import type { Store } from '../store/store.js';
import type { SecretBox } from '../security/secret-box.js';
import type { Logger } from '../telemetry/logger.js';
import { degradationFor, type Degradation, type Quota, type Usage } from '../select/quota-ladder.js';
import { dayOf } from '../store/backlog-repo.js';
import { recordAudit } from '../audit/drain-audit.js';

export interface DrainPlan {
  readonly drain: Drain;
  /** `id:version`: a batch is bound to the plan it was opened under. */
  readonly key: string;
  readonly deliverable: boolean;
  readonly select: Selector;
  readonly shape: ShapeOptions;
  /** Built-in and customer scrub rules, compiled once (RE2). */
  readonly scrubber: Scrubber;
  /**
   * Everything that decides a shaped, scrubbed record (content rule,
   * redaction, scrub patterns): plans of one organization with equal keys
   * deliver identical records, so the pipeline shapes a record once for them.
   */
  readonly shapeKey: string;
  readonly encoder: Encoder;
  readonly url: string;
  /** Configured headers, opened. */
  readonly headers: Readonly<Record<string, string>>;
  /** HMAC keys, newest first; empty for unsigned types. */
  readonly signingKeys: readonly Buffer[];
}

export function compilePlan(drain: Drain, box: SecretBox, nowMs = Date.now()): DrainPlan {
  const headers: Record<string, string> = {};
  for (const h of drain.headers) headers[h.name.toLowerCase()] = box.open(h.value);
  const signingKeys: Buffer[] = [];
  if (drain.type === 'http' && drain.secret) {
    signingKeys.push(signingKey(box.open(drain.secret)));
    const windowOpen = drain.rotationExpiresAt !== null && drain.rotationExpiresAt.getTime() > nowMs;
    if (drain.previousSecret && windowOpen) signingKeys.push(signingKey(box.open(drain.previousSecret)));
  }
  const shape = { includeContent: drain.selectors.includeContent, redact: drain.redact ? new Set(drain.redact) : null };
  return {
    drain,
    key: `${drain.id}:${drain.version}:${drain.updatedAt.getTime()}`,
    deliverable: isDeliverable(drain.state),
    select: compileSelector(drain.selectors, drain.sampling),
    shape,
    scrubber: compileScrubber(drain.scrubRules),
    shapeKey: shapeKeyOf(shape, drain.scrubRules),
    encoder: encoderFor(drain),
    url: drain.endpoint ?? '',
    headers,
    signingKeys,
  };
}

/**
 * The shape key: redaction as a sorted set, scrub rules as their patterns
 * and flags in order (ids and names do not change what is scrubbed; order
 * does, since the first matching rule wins).
 */
export function shapeKeyOf(shape: ShapeOptions, rules: readonly ScrubRule[] | null): string {
  return JSON.stringify([
    shape.includeContent,
    shape.redact ? [...shape.redact].sort() : null,
    (rules ?? []).map((r) => [r.pattern, r.flags ?? '']),
  ]);
}

const sharedOtlp = sharedEncoding(otlpEncoder);
const sharedVendorA = sharedEncoding(vendorAEncoder);
const sharedVendorB = sharedEncoding(vendorBEncoder);

/**
 * Each type fixes its encoding; only `http` honours `format`. The encodings
 * without a batch id in the body are shared between drains sending the same
 * batch (encode/shared-encoding.ts).
 */
function encoderFor(drain: Drain): Encoder {
  switch (drain.type) {
    case 'otlp':
      return sharedOtlp;
    case 'vendor-a':
      return sharedVendorA;
    case 'vendor-b':
      return sharedVendorB;
    default:
      return drain.format === 'ndjson' ? ndjsonEncoder : jsonEncoder;
  }
}

export interface DrainRegistry {
  /** Where the drain stands on the quota ladder today. */
  degradationOf(drainId: string): Degradation;
  plansFor(orgId: string): readonly DrainPlan[];
  planFor(drainId: string): DrainPlan | undefined;
  allPlans(): Iterable<DrainPlan>;
  refresh(): Promise<void>;
  /**
   * Only the configuration check of refresh(): one small query when nothing
   * changed. The embedded source calls it before routing each chunk, so a
   * record enqueued after a drain change was answered is routed by the change.
   */
  syncConfig(): Promise<boolean>;
  start(): Promise<void>;
  stop(): void;
}

export function createDrainRegistry(opts: {
  store: Pick<Store, 'drains' | 'secretBox' | 'backlog' | 'audit'>;
  refreshMs: number;
  logger: Logger;
  quota: Quota;
}): DrainRegistry {
  let usage = new Map<string, Usage>();
  const degradations = new Map<string, Degradation>();
  let byOrg = new Map<string, DrainPlan[]>();
  let byId = new Map<string, DrainPlan>();
  let fingerprint = '';
  // Plans built inside a rotation window sign with two keys; rebuild them when the window ends.
  let rebuildAt = Infinity;
  let timer: NodeJS.Timeout | undefined;
  const none: readonly DrainPlan[] = [];

  async function refresh(): Promise<void> {
    if (!(await syncConfig())) await applyQuota();
  }

  /** Rebuilds the plans if the stored configuration changed (or a rotation window ended); answers whether it did. */
  async function syncConfig(): Promise<boolean> {
    const f = await opts.store.drains.configFingerprint();
    if (f === fingerprint && Date.now() < rebuildAt) return false;
    await rebuild(f);
    return true;
  }

  async function rebuild(f: string): Promise<void> {
    const drains = await opts.store.drains.listAll();
    const next = new Map<string, DrainPlan[]>();
    const nextById = new Map<string, DrainPlan>();
    for (const d of drains) {
      try {
        const plan = compilePlan(d, opts.store.secretBox);
        nextById.set(d.id, plan);
        const list = next.get(d.orgId);
        if (list) list.push(plan);
        else next.set(d.orgId, [plan]);
      } catch (e) {
        opts.logger.error({ event: 'drain.compile_failed', drainId: d.id, err: (e as Error).message }, 'drain plan failed to compile');
      }
    }
    byOrg = next;
    byId = nextById;
    fingerprint = f;
    if (opts.logger.isLevelEnabled('debug')) opts.logger.debug({ event: 'drain.plans_loaded', drains: drains.map((d) => `${d.id}:${d.state}`) }, 'drain plans reloaded');
    await applyQuota();
    const now = Date.now();
    rebuildAt = Math.min(Infinity, ...drains.map((d) => d.rotationExpiresAt?.getTime() ?? Infinity).filter((t) => t > now));
  }

  /** Reads today's use, places each drain on the ladder, pauses and resumes drains at its top. */
  async function applyQuota(): Promise<void> {
    usage = await opts.store.backlog.usage(dayOf(Date.now()));
    for (const plan of byId.values()) {
      const d = plan.drain;
      const level = degradationFor(usage.get(d.id) ?? { events: 0, bytes: 0 }, opts.quota);
      degradations.set(d.id, level);
      const system = { type: 'system' as const, id: 'quota-ladder' };
      if (level === 'paused' && d.state !== 'paused') {
        const moved = await opts.store.drains.transition(d.id, ['healthy', 'degraded', 'pending_verification'], 'paused', 'quota');
        if (moved) {
          await recordAudit(opts.store as Store, system, 'logs.drain.quota_paused', moved, { usage: usage.get(d.id) });
          opts.logger.warn({ event: 'drain.quota_paused', drainId: d.id }, 'drain paused by its quota');
        }
      } else if (level !== 'paused' && d.state === 'paused' && d.pauseReason === 'quota') {
        // A new day: the quota reset. Back to degraded (or to verification if it never passed it).
        const moved = await opts.store.drains.transition(d.id, ['paused'], isVerifiedForEndpoint(d) ? 'degraded' : 'pending_verification', null);
        if (moved) await recordAudit(opts.store as Store, system, 'logs.drain.resumed', moved, { reason: 'quota reset' });
      }
    }
  }

  return {
    degradationOf: (drainId) => degradations.get(drainId) ?? 'none',
    plansFor: (orgId) => byOrg.get(orgId) ?? none,
    planFor: (drainId) => byId.get(drainId),
    allPlans: () => byId.values(),
    refresh,
    syncConfig,
    async start() {
      await refresh();
      timer = setInterval(() => {
        refresh().catch((e) => opts.logger.warn({ event: 'drain.refresh_failed', err: (e as Error).message }, 'drain refresh failed'));
      }, opts.refreshMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
