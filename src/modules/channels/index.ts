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
import { applyWhenRecorded } from './notifications.js';

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

export type { ChannelDeps };
