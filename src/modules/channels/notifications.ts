/**
 * The channels family's send port for the other families, without its routes: a `logdrain
 * worker` sends workflow run-end notifications through it and loads none of the API
 * (src/modules/background.ts).
 */
import type { ChannelDeps } from './context.js';
import { createChannelService } from './service.js';
import type { ChannelNotificationPort } from '../platform-deps.js';
import { refused } from './errors.js';

/**
 * The port other families send through (platform-deps.ts), for the composition root: a service of
 * its own on the process's store and vendors. Its sends carry no attachments. `applyReceipts`: the
 * process has no channels routes (a `logdrain worker`), so the receipts its messaging adapter hears
 * itself (the sandbox's) are applied here, as the family does them in an API process.
 */
export function createChannelNotifications(deps: Pick<ChannelDeps, 'config' | 'store' | 'logger' | 'vendors' | 'metrics'>, opts: { applyReceipts?: boolean } = {}): ChannelNotificationPort {
  const service = createChannelService({
    store: deps.store, vendors: deps.vendors, logger: deps.logger, queueExpiryMs: deps.config.channels.queueExpiryMs, metrics: deps.metrics,
    fetchAttachments: async () => {
      throw refused('A notification carries no attachments');
    },
  });
  if (opts.applyReceipts) deps.vendors.messaging.onReceipt((r) => applyWhenRecorded(() => service.applyReceipt(r)));
  return { send: (n) => service.sendNotification(n) };
}

/** A receipt can overtake the commit of its send's record by a moment: try again a few times. */
export async function applyWhenRecorded(apply: () => Promise<{ deliveryId: string | null; duplicate: boolean }>): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const r = await apply();
    if (r.deliveryId !== null || r.duplicate) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}
