/**
 * The channels family (spec 03 parts 2.2, 2.3, 3, 4.2): sends on seven
 * channels, chat-app templates and reactions, email, delivery records and
 * their status moves (vendor receipts, the sweep), the vendors' receipt route.
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import type { ChannelDeps } from './context.js';
import { channelMigrations } from './migrations.js';
import { registerChannelRoutes } from './routes.js';
import { createChannelService } from './service.js';
import { createAttachmentFetcher } from './attachments.js';
import { startSweep } from './sweep.js';
import { inboundMessagesSeed } from './seed.js';
import type { ChannelNotificationPort } from '../platform-deps.js';
import { refused } from './errors.js';

export const channelsFamily = defineFamily<ChannelDeps>({
  name: 'channels',
  migrations: channelMigrations,
  seed: inboundMessagesSeed,
  register(app: FastifyInstance, deps: ChannelDeps) {
    const c = deps.config.channels;
    const fetchAttachments = createAttachmentFetcher({ allowHosts: c.attachmentAllowHosts, timeoutMs: c.attachmentTimeoutMs, extraCaCerts: deps.config.extraCaCerts });
    const service = createChannelService({ store: deps.store, vendors: deps.vendors, logger: deps.logger, queueExpiryMs: c.queueExpiryMs, fetchAttachments, metrics: deps.metrics, reads: deps.reads });
    // The sandbox plays its receipts in-process; a real vendor's arrive through the receipt route.
    deps.vendors.messaging.onReceipt((r) => applyWhenRecorded(() => service.applyReceipt(r)));
    const sweep = startSweep(service, c.sweepIntervalMs, deps.logger);
    app.addHook('onClose', async () => {
      sweep.stop();
      await deps.vendors.messaging.close();
      await deps.vendors.mail.close();
      await fetchAttachments.close();
    });
    registerChannelRoutes(app, service);
  },
});

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
async function applyWhenRecorded(apply: () => Promise<{ deliveryId: string | null; duplicate: boolean }>): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const r = await apply();
    if (r.deliveryId !== null || r.duplicate) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}

export type { ChannelDeps };
