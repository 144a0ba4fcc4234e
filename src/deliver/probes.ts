/**
 * The probe runner: the one path by which a worker sends what the service
 * sends on a drain's own behalf.
 *
 *   verify     the single ownership attempt with the drain's token (verify-attempt.ts)
 *   test       one `svc.drain.test` record through the deliverer: retries and accounting as
 *              any batch, under the batch id the route answered
 *   heartbeat  one `svc.drain.heartbeat` record, one accounted attempt (heartbeat.ts decides when)
 *
 * The API enqueues verify and test probes in the store (modules/drains/tables/probes.ts); the runner claims
 * them with a lease it renews while they run, so two workers never both send one and the claim
 * of a worker that died is taken by another once its lease has passed. It hears of a new probe
 * through the store's notification (LISTEN/NOTIFY on Postgres, the same in one PGlite process)
 * and polls as a fallback (a lost notification, a pooler that cannot LISTEN).
 */
import type { Drain } from '../model/drain.js';
import { isVerifiedForEndpoint } from '../model/drain.js';
import type { Store } from '../store/store.js';
import type { ClaimedProbe } from '../modules/drains/tables/probes.js';
import type { Actor } from '../audit/drain-audit.js';
import type { Logger } from '../telemetry/logger.js';
import { compilePlan, type DrainPlan } from '../plan/drain-plans.js';
import { serviceBatch } from '../batch/service-batch.js';
import type { Deliverer } from './deliverer.js';
import type { Transport } from './transport.js';
import { attemptVerification } from './verify-attempt.js';

export type Probe =
  | { kind: 'heartbeat'; plan: DrainPlan }
  | { kind: 'test'; drain: Drain; batchId: string }
  | { kind: 'verify'; drain: Drain; verificationId: string; token: string; actor: Actor };

export interface ProbeRunner {
  /** Sends one probe now: every kind goes through here, whoever decided to send it. */
  send(probe: Probe): Promise<void>;
  /** Claims and runs enqueued probes until stopped. */
  start(): Promise<void>;
  /** Claims nothing more; resolves once the probes it runs have finished. */
  stop(): Promise<void>;
  /** Looks for enqueued probes now. */
  wake(): void;
}

export interface ProbeRunnerOptions {
  store: Store;
  deliverer: Deliverer;
  transport: Transport;
  logger: Logger;
  /** This worker's name on its claims. */
  owner: string;
  /** How long a claim holds without renewal (PROBE_LEASE_MS). */
  leaseMs: number;
  /** How often the queue is polled when no notification comes (PROBE_POLL_MS). */
  pollMs: number;
  /** Wake on the store's notifications (DRAIN_CONFIG_LISTEN: off behind a pooler that cannot LISTEN). */
  listen: boolean;
  region?: string | undefined;
  /** Probes run at once by this worker. */
  maxRunning?: number;
}

/**
 * A probe claimed this many times was never finished: each worker that took it stopped (crashed)
 * while running it. It is dropped rather than allowed to take down every worker in turn.
 */
export const MAX_PROBE_CLAIMS = 5;

export function createProbeRunner(opts: ProbeRunnerOptions): ProbeRunner {
  const { store, logger } = opts;
  const maxRunning = opts.maxRunning ?? 16;
  const running = new Map<string, Promise<void>>();
  let stopped = true;
  let looking: Promise<void> | undefined;
  let lookAgain = false;
  let poll: NodeJS.Timeout | undefined;
  let renewal: NodeJS.Timeout | undefined;
  let unwatch: (() => Promise<void>) | undefined;

  async function send(probe: Probe): Promise<void> {
    switch (probe.kind) {
      case 'heartbeat':
        await opts.deliverer.deliverOnce(serviceBatch(probe.plan, 'heartbeat', opts.region), 1);
        return;
      case 'test': {
        const { drain } = probe;
        const batch = serviceBatch(compilePlan(drain, store.secretBox), 'test', opts.region, new Date(), probe.batchId);
        // Never retried to an endpoint the drain has left (limits.md).
        batch.stillCurrent = async () => (await store.drains.get(drain.orgId, drain.id))?.endpoint === drain.endpoint;
        await opts.deliverer.submit(batch);
        return;
      }
      case 'verify':
        await attemptVerification({
          store, transport: opts.transport, logger, drain: probe.drain, actor: probe.actor,
          verification: { verificationId: probe.verificationId, token: probe.token },
        });
        return;
    }
  }

  /** A claimed probe, against the drain as it stands now. */
  async function runClaimed(p: ClaimedProbe): Promise<void> {
    if (p.claims > MAX_PROBE_CLAIMS) {
      logger.warn({ event: 'probe.abandoned', probeId: p.id, kind: p.kind, drainId: p.drainId, claims: p.claims }, 'probe dropped: every worker that claimed it stopped before it finished');
      return;
    }
    const drain = await store.drains.get(p.orgId, p.drainId);
    if (!drain) return; // deleted meanwhile: nothing to send to
    if (p.kind === 'verify') {
      await send({ kind: 'verify', drain, verificationId: p.batchId, token: store.secretBox.open(p.sealedToken ?? ''), actor: p.actor });
      return;
    }
    // The route checked this too; the endpoint may have moved since, and a test batch goes only
    // to a verified one (spec 01 part 1).
    if (!isVerifiedForEndpoint(drain)) {
      logger.info({ event: 'probe.superseded', probeId: p.id, drainId: drain.id, batchId: p.batchId }, 'test batch not sent: the drain\'s endpoint is no longer verified');
      return;
    }
    await send({ kind: 'test', drain, batchId: p.batchId });
  }

  function run(p: ClaimedProbe): void {
    const done = runClaimed(p)
      .catch((e) => logger.error({ event: 'probe.failed', probeId: p.id, kind: p.kind, drainId: p.drainId, err: (e as Error).message }, 'probe failed'))
      // Finished either way: its outcome (or failure) is recorded; sending it again would not change that.
      .then(() => store.probes.finish(p.id, opts.owner))
      .catch((e) => logger.warn({ event: 'probe.finish_failed', probeId: p.id, err: (e as Error).message }, 'probe not removed; it runs again after its lease'))
      .finally(() => {
        running.delete(p.id);
        wake();
      });
    running.set(p.id, done);
  }

  async function look(): Promise<void> {
    const free = maxRunning - running.size;
    if (free <= 0) return;
    let claimed: ClaimedProbe[];
    try {
      claimed = await store.probes.claim(opts.owner, opts.leaseMs, free);
    } catch (e) {
      logger.warn({ event: 'probe.claim_failed', err: (e as Error).message }, 'could not claim probes');
      return;
    }
    if (stopped) {
      // Stopped while claiming: free again for the next worker.
      await store.probes.release(claimed.map((p) => p.id), opts.owner).catch(() => {});
      return;
    }
    for (const p of claimed) run(p);
    // A full claim may have left more waiting.
    if (claimed.length === free) lookAgain = true;
  }

  function wake(): void {
    if (stopped) return;
    if (looking) {
      lookAgain = true;
      return;
    }
    looking = look().finally(() => {
      looking = undefined;
      if (lookAgain) {
        lookAgain = false;
        wake();
      }
    });
  }

  /** Keeps this worker's claims alive while their probes run (a test batch may retry for long). */
  function renew(): void {
    if (running.size === 0) return;
    store.probes.renew([...running.keys()], opts.owner, opts.leaseMs).catch((e) =>
      logger.warn({ event: 'probe.renew_failed', err: (e as Error).message }, 'could not renew probe claims'),
    );
  }

  return {
    send,
    wake,
    async start() {
      stopped = false;
      if (opts.listen) unwatch = await store.probes.watch(wake);
      poll = setInterval(wake, opts.pollMs);
      poll.unref();
      renewal = setInterval(renew, Math.max(10, Math.floor(opts.leaseMs / 3)));
      renewal.unref();
      wake();
    },
    async stop() {
      stopped = true;
      if (poll) clearInterval(poll);
      await unwatch?.().catch(() => {});
      await looking;
      await Promise.allSettled([...running.values()]);
      if (renewal) clearInterval(renewal);
    },
  };
}
