/**
 * What the API hands every family: each takes the part it needs (its own
 * `Deps` type is a subset of this). Built once by src/api/server.ts.
 */
import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../telemetry/logger.js';
import type { RateLimiter } from '../api/kernel/rate-limit.js';
import type { RecordSink } from './ingest/records.js';
import type { Vendors } from '../vendors/index.js';

export interface PlatformDeps {
  config: Config;
  store: Store;
  logger: Logger;
  limiter: RateLimiter;
  /** Where accepted records go: the embedded queue or the Kafka topic. */
  sink: RecordSink;
  /** The vendors' ports (src/vendors/), their adapters chosen from configuration. */
  vendors: Vendors;
  /** Sends on the agent's channels for another family (the channels family's, built by the composition root). */
  channelNotifications: ChannelNotificationPort;
}

/**
 * What the channels family offers the other families: a message (a workflow run's end summary,
 * contract W8) sent to a channels recipient of the agent and recorded as a delivery with `origin:
 * notification`. Families never import each other; this port is how workflows reaches channels.
 */
export interface ChannelNotificationPort {
  send(n: ChannelNotification): Promise<ChannelNotificationOutcome>;
}

export interface ChannelNotification {
  orgId: string;
  agentId: string;
  /** The channel to send on; undefined: the thread's own (`workchat` for a conversation, else the channel the end user last wrote on). */
  channel: 'chatapp' | 'sms' | 'email' | 'webchat' | undefined;
  /** A channels recipient of the agent: an end user's id, or a `workchat` conversation id. */
  thread: string;
  /** The subject of an email send (other channels send `text` alone). */
  subject: string;
  text: string;
  /**
   * The delivery record's id, chosen by the caller: a send under an id already recorded sends
   * nothing and answers that delivery (a caller that died after the send and before it noted the
   * outcome finds it so).
   */
  deliveryId: string;
}

export type ChannelNotificationOutcome =
  /** Recorded and handed to the vendor (`status` accepted), or queued for a closed chat-app window. */
  | { kind: 'sent'; channel: string; deliveryId: string; status: string }
  /** The vendor refused it: recorded as a failed delivery; `retryable` as the vendor's failure says. */
  | { kind: 'failed'; channel: string; deliveryId: string; retryable: boolean; error: { code: string; message: string } }
  /** The recipient rules refuse it (unknown thread, a channel the recipient cannot be reached on): nothing sent or recorded. */
  | { kind: 'refused'; channel: string | null; error: { code: string; message: string } };
