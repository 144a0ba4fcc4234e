/**
 * The worker's current drain plans, and the rule that makes a drain change
 * hold for every record accepted after its answer:
 *
 *   a chunk of records is routed only once `current()` has resolved after the
 *   chunk arrived, and `current()` resolves only after a read of the store's
 *   drain configuration version that was sent after the call, with the plans
 *   rebuilt if that version moved.
 *
 * A record accepted after a change was answered reaches the worker after the
 * change committed, so a version read sent after the record arrived sees the
 * change. This holds by construction, whatever the clocks or the timing of
 * notifications: concurrent callers share one read, so it costs one small
 * query per fetch, not per record. Changes are also pushed (LISTEN/NOTIFY on
 * Postgres, the same through PGlite in one process): the plans are usually
 * rebuilt before the next chunk asks, and that read finds nothing new.
 *
 * A rebuild recompiles only the drains whose row changed (its plan key, its
 * state) or whose secret rotation window closed; every other drain keeps the
 * plan object it had.
 */
import type { Store } from '../store/store.js';
import type { Logger } from '../telemetry/logger.js';
import { degradationFor, type Degradation, type Quota, type Usage } from '../model/quota-ladder.js';
import { dayOf } from '../model/time.js';
import { compilePlan, planKeyOf, rotationWindowOpen, type DrainPlan } from './drain-plans.js';
import { applyQuotaLevel } from '../drains/quota.js';

export interface DrainRegistry {
  /** Where the drain stands on the quota ladder today. */
  degradationOf(drainId: string): Degradation;
  plansFor(orgId: string): readonly DrainPlan[];
  planFor(drainId: string): DrainPlan | undefined;
  allPlans(): Iterable<DrainPlan>;
  /**
   * Resolves once the plans hold every drain change committed before this call (see the top of
   * this file); rejects when the store cannot be read, and then nothing may be routed yet.
   */
  current(): Promise<void>;
  /** current(), then the quota ladder: what the periodic refresh does. */
  refresh(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface DrainRegistryOptions {
  store: Pick<Store, 'drains' | 'secretBox' | 'backlog' | 'unitOfWork'>;
  /** How often the quota ladder is applied and the version read without a record asking (DRAIN_REFRESH_MS). */
  refreshMs: number;
  /** Rebuild on the store's change notifications (DRAIN_CONFIG_LISTEN); routing is correct without them. */
  listen: boolean;
  logger: Logger;
  quota: Quota;
}

export function createDrainRegistry(opts: DrainRegistryOptions): DrainRegistry {
  let usage = new Map<string, Usage>();
  const degradations = new Map<string, Degradation>();
  let byOrg = new Map<string, DrainPlan[]>();
  let byId = new Map<string, DrainPlan>();
  /** Whether each plan was compiled inside its drain's rotation window. */
  let windows = new Map<string, boolean>();
  let loadedVersion = -1;
  // Plans built inside a rotation window sign with two keys; rebuild them when the window ends.
  let rebuildAt = Infinity;
  let timer: NodeJS.Timeout | undefined;
  let unwatch: (() => Promise<void>) | undefined;
  let checking: Promise<void> | undefined;
  let nextCheck: Promise<void> | undefined;
  const none: readonly DrainPlan[] = [];
  const warnRefresh = (e: unknown) => opts.logger.warn({ event: 'drain.refresh_failed', err: (e as Error).message }, 'drain refresh failed');

  function current(): Promise<void> {
    if (checking === undefined) {
      checking = check().finally(() => (checking = undefined));
      return checking;
    }
    // The check under way may have read the version before this caller's records arrived: the
    // next one, shared by every caller until it starts, is certain not to have.
    nextCheck ??= checking.then(noop, noop).then(() => {
      nextCheck = undefined;
      return current();
    });
    return nextCheck;
  }

  /** One version read; the plans rebuilt if it moved (or a rotation window ended). Never two at once. */
  async function check(): Promise<void> {
    const version = await opts.store.drains.configVersion();
    if (version === loadedVersion && Date.now() < rebuildAt) return;
    // The drains are read after the version: the plans hold at least every change it counts.
    const drains = await opts.store.drains.listAll();
    const next = new Map<string, DrainPlan[]>();
    const nextById = new Map<string, DrainPlan>();
    const compiledAt = Date.now();
    const nextWindows = new Map<string, boolean>();
    for (const d of drains) {
      try {
        const windowOpen = rotationWindowOpen(d, compiledAt);
        const prev = byId.get(d.id);
        // A drain whose row did not change keeps its compiled plan (selector, scrubber, opened
        // secrets): one drain's change recompiles that drain, not all of them.
        const plan = prev !== undefined && prev.key === planKeyOf(d) && prev.drain.state === d.state && windows.get(d.id) === windowOpen
          ? prev
          : compilePlan(d, opts.store.secretBox, compiledAt);
        nextWindows.set(d.id, windowOpen);
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
    windows = nextWindows;
    loadedVersion = version;
    const now = Date.now();
    rebuildAt = Math.min(Infinity, ...drains.map((d) => d.rotationExpiresAt?.getTime() ?? Infinity).filter((t) => t > now));
    if (opts.logger.isLevelEnabled('debug')) {
      opts.logger.debug({ event: 'drain.plans_loaded', version, drains: drains.map((d) => `${d.id}:${d.state}`) }, 'drain plans reloaded');
    }
    // New drains get their place on the ladder now, not at the next refresh; routing does not wait for it.
    void ladder().catch(warnRefresh);
  }

  let laddering: Promise<void> | undefined;
  /** applyQuota, one run at a time: a call during a run waits for it and runs again. */
  async function ladder(): Promise<void> {
    while (laddering) await laddering.catch(noop);
    laddering = applyQuota().finally(() => (laddering = undefined));
    return laddering;
  }

  /** Reads today's use, places each drain on the ladder, pauses and resumes drains at its top. */
  async function applyQuota(): Promise<void> {
    usage = await opts.store.backlog.usage(dayOf(Date.now()));
    for (const plan of byId.values()) {
      const d = plan.drain;
      const level = degradationFor(usage.get(d.id) ?? { events: 0, bytes: 0 }, opts.quota);
      degradations.set(d.id, level);
      // The move itself (and its audit entry) is the drain domain's (src/drains/quota.ts).
      const moved = await applyQuotaLevel(opts.store, d, level, usage.get(d.id));
      if (moved?.ok && moved.drain.state === 'paused') opts.logger.warn({ event: 'drain.quota_paused', drainId: d.id }, 'drain paused by its quota');
    }
  }

  async function refresh(): Promise<void> {
    await current();
    await ladder();
  }

  return {
    degradationOf: (drainId) => degradations.get(drainId) ?? 'none',
    plansFor: (orgId) => byOrg.get(orgId) ?? none,
    planFor: (drainId) => byId.get(drainId),
    allPlans: () => byId.values(),
    current,
    refresh,
    async start() {
      if (opts.listen) {
        // A change made elsewhere: rebuild now, so the next chunk's check finds the plans current.
        unwatch = await opts.store.drains.watchConfig(() => void current().catch(warnRefresh));
      }
      await refresh();
      timer = setInterval(() => void refresh().catch(warnRefresh), opts.refreshMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await unwatch?.();
    },
  };
}

function noop(): void {}
