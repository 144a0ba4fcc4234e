/**
 * What every channel route shares: its dependencies, its scopes and the
 * access it declares (the agent in the path with `channels:send`, the bulk
 * template trigger's too; the receipt route: a typed key of the organization
 * with `channels:receipts`).
 */
import type { ChannelsConfig } from './config.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Logger } from '../../telemetry/logger.js';
import type { RateLimiter } from '../../api/kernel/rate-limit.js';
import type { Access } from '../../api/kernel/access.js';
import { defineScopes } from '../../api/kernel/scopes.js';
import type { Vendors } from '../../vendors/index.js';
import type { FamilyMetrics } from '../platform-deps.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';

export const SEND_SCOPE = 'channels:send';
export const RECEIPTS_SCOPE = 'channels:receipts';

defineScopes('channels', {
  [SEND_SCOPE]: { description: 'every channel send and delivery read of the agent (spec 03 part 5; covered by channels:*, not by *:read)' },
  [RECEIPTS_SCOPE]: { sensitive: true, description: "a messaging or mail vendor's callbacks (receipts, inbound messages) for the key's organization" },
});

export const CHANNELS_BASE = '/developer/agents/:agentId/channels';
export const RECEIPTS_PATH = '/developer/channels/receipts';
/** The bulk chat-app template trigger (spec 03 part 4.2, contract C20). */
export const TRIGGER_PATH = '/admin/agents/:agentId/channels/:channelId/chatapp-templates/:templateId/trigger';

export interface ChannelDeps {
  /** The family's slice of the configuration (./config.ts), and the CA file attachment fetches trust. */
  config: { readonly channels: ChannelsConfig; readonly extraCaCerts?: string | undefined };
  store: KernelStore;
  logger: Logger;
  limiter: RateLimiter;
  vendors: Vendors;
  /** Sends recorded and receipts applied (/metrics). */
  metrics: FamilyMetrics;
  /** The read caches (the deliveries list's). */
  reads: ReadCaches;
}

export const sendAccess: Access = { resource: 'agent', scope: { required: SEND_SCOPE } };
/** A vendor reports what already happened: recorded on an archived organization too (refusing it would only lose it). */
export const receiptsAccess: Access = { resource: 'key-org', scope: { required: RECEIPTS_SCOPE }, onArchivedOrg: 'serve' };
