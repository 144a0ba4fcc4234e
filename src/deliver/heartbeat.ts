/**
 * Heartbeats (docs/delivery.md, "Heartbeats"): a delivering drain (healthy or
 * degraded) that has had no attempt of any kind for HEARTBEAT_INTERVAL_MS
 * gets one `svc.drain.heartbeat` record, recorded as a `heartbeat`
 * delivery. It tells the customer the pipe is alive when their agents are
 * quiet, and gives the state machine an outcome to judge. A lease per drain
 * keeps one worker sending it. It is sent by the probe runner (probes.ts), as
 * test batches and verification attempts are.
 */
import type { Store } from '../store/store.js';
import type { DrainRegistry } from '../plan/drain-registry.js';
import type { Logger } from '../telemetry/logger.js';
import type { ProbeRunner } from './probes.js';

export function createHeartbeat(opts: {
  store: Store;
  registry: DrainRegistry;
  probes: Pick<ProbeRunner, 'send'>;
  logger: Logger;
  intervalMs: number;
  owner: string;
  /** Drains whose circuit is open: their destination is left alone until its probe (circuit.ts). */
  braked?: (drainId: string) => boolean;
}): { stop(): void } {
  if (opts.intervalMs <= 0) return { stop() {} };
  const checkEveryMs = Math.max(1000, Math.min(60_000, opts.intervalMs / 5));
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void beat().finally(() => (busy = false));
  }, checkEveryMs);
  timer.unref();

  async function beat(): Promise<void> {
    for (const plan of opts.registry.allPlans()) {
      if (!plan.deliverable || opts.braked?.(plan.drain.id)) continue;
      try {
        const last = await opts.store.deliveries.lastAttemptAt(plan.drain.id);
        if (last && Date.now() - last.getTime() < opts.intervalMs) continue;
        if (!(await opts.store.backlog.lease(`heartbeat:${plan.drain.id}`, opts.owner, opts.intervalMs))) continue;
        await opts.probes.send({ kind: 'heartbeat', plan });
      } catch (e) {
        opts.logger.warn({ event: 'heartbeat.failed', drainId: plan.drain.id, err: (e as Error).message }, 'heartbeat failed');
      }
    }
  }

  return { stop: () => clearInterval(timer) };
}
