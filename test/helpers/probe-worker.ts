/**
 * A worker's probe runner on its own (src/deliver/probes.ts), for suites that build the API with
 * buildApi and need what its verify and test routes enqueue sent, as a worker beside it would.
 */
import type { Config } from '../../src/config/config.js';
import type { Store } from '../../src/store/store.js';
import type { Transport } from '../../src/deliver/transport.js';
import { createAccountant } from '../../src/account/accountant.js';
import { createDeliverer } from '../../src/deliver/deliverer.js';
import { createProbeRunner, type ProbeRunner } from '../../src/deliver/probes.js';
import { noEvents } from '../../src/telemetry/events.js';
import { silentLogger, type Logger } from '../../src/telemetry/logger.js';

export interface ProbeWorker {
  runner: ProbeRunner;
  stop(): Promise<void>;
}

export async function startProbeWorker(opts: {
  config: Config;
  store: Store;
  transport: Transport;
  owner?: string;
  logger?: Logger;
}): Promise<ProbeWorker> {
  const logger = opts.logger ?? silentLogger();
  const accountant = createAccountant({ store: opts.store, logger });
  const deliverer = createDeliverer({
    transport: opts.transport, accountant, events: noEvents, logger, retry: opts.config.retry, bufferHorizonMs: opts.config.bufferHorizonMs,
  });
  const runner = createProbeRunner({
    store: opts.store, deliverer, transport: opts.transport, logger, owner: opts.owner ?? 'probe-worker',
    leaseMs: opts.config.probeLeaseMs, pollMs: opts.config.probePollMs, listen: opts.config.drainConfigListen,
  });
  await runner.start();
  return {
    runner,
    async stop() {
      deliverer.abandonRetries();
      await runner.stop();
      await accountant.stop();
    },
  };
}
