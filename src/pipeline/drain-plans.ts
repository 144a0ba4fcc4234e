/**
 * The worker's view of drain configuration: every live drain compiled once
 * per configuration version into a DrainPlan (selector, shaping options,
 * encoder, opened headers and signing keys). The registry reloads when the
 * store's configuration fingerprint changes, so every worker notices edits
 * within DRAIN_REFRESH_MS.
 */
import { isDeliverable, type Drain } from '../model/drain.js';
import { compileSelector, type Selector } from '../select/selector.js';
import type { ShapeOptions } from '../shape/delivered-record.js';
import type { Encoder } from '../encode/encoder.js';
import { jsonEncoder } from '../encode/json.js';
import { ndjsonEncoder } from '../encode/ndjson.js';
import { signingKey } from '../sign/standard-webhooks.js';
import type { Store } from '../store/store.js';
import type { SecretBox } from '../security/secret-box.js';
import type { Logger } from '../telemetry/logger.js';

export interface DrainPlan {
  readonly drain: Drain;
  /** `id:version`: a batch is bound to the plan it was opened under. */
  readonly key: string;
  readonly deliverable: boolean;
  readonly select: Selector;
  readonly shape: ShapeOptions;
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
  return {
    drain,
    key: `${drain.id}:${drain.version}:${drain.updatedAt.getTime()}`,
    deliverable: isDeliverable(drain.state),
    select: compileSelector(drain.selectors, drain.sampling),
    shape: { includeContent: drain.selectors.includeContent, redact: drain.redact ? new Set(drain.redact) : null },
    encoder: drain.format === 'ndjson' ? ndjsonEncoder : jsonEncoder,
    url: drain.endpoint ?? '',
    headers,
    signingKeys,
  };
}

export interface DrainRegistry {
  plansFor(orgId: string): readonly DrainPlan[];
  refresh(): Promise<void>;
  start(): Promise<void>;
  stop(): void;
}

export function createDrainRegistry(opts: {
  store: Pick<Store, 'drains' | 'secretBox'>;
  refreshMs: number;
  logger: Logger;
}): DrainRegistry {
  let byOrg = new Map<string, DrainPlan[]>();
  let fingerprint = '';
  // Plans built inside a rotation window sign with two keys; rebuild them when the window ends.
  let rebuildAt = Infinity;
  let timer: NodeJS.Timeout | undefined;
  const none: readonly DrainPlan[] = [];

  async function refresh(): Promise<void> {
    const f = await opts.store.drains.configFingerprint();
    if (f === fingerprint && Date.now() < rebuildAt) return;
    const drains = await opts.store.drains.listAll();
    const next = new Map<string, DrainPlan[]>();
    for (const d of drains) {
      try {
        const plan = compilePlan(d, opts.store.secretBox);
        const list = next.get(d.orgId);
        if (list) list.push(plan);
        else next.set(d.orgId, [plan]);
      } catch (e) {
        opts.logger.error({ event: 'drain.compile_failed', drainId: d.id, err: (e as Error).message }, 'drain plan failed to compile');
      }
    }
    byOrg = next;
    fingerprint = f;
    const now = Date.now();
    rebuildAt = Math.min(Infinity, ...drains.map((d) => d.rotationExpiresAt?.getTime() ?? Infinity).filter((t) => t > now));
  }

  return {
    plansFor: (orgId) => byOrg.get(orgId) ?? none,
    refresh,
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
