/**
 * The status sweep on a timer of the family's own: expires queued sends that
 * waited longer than CHANNEL_QUEUE_EXPIRY_MS. The work is the service's
 * `sweep(at)`, which tests call with the instant they choose.
 */
import type { Logger } from '../../telemetry/logger.js';
import type { ChannelService } from './service.js';

export function startSweep(service: Pick<ChannelService, 'sweep'>, intervalMs: number, logger: Logger): { stop(): void } {
  if (intervalMs <= 0) return { stop() {} };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    service.sweep().catch((e: unknown) => logger.warn({ event: 'channels.sweep_failed', err: (e as Error).message }, 'channel status sweep failed')).finally(() => {
      running = false;
    });
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
