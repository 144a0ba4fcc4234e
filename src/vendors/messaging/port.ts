/**
 * The messaging vendors' port: chat-app, SMS, web chat, work chat and the
 * two social inboxes. A family sends through it and hears the vendor's
 * receipts (status callbacks) through it; it never sees an adapter.
 */

/** What a vendor says went wrong (spec 03 part 2.3 failure object, without the provider). */
export interface VendorFailure {
  category:
    | 'window_closed' | 'unreachable' | 'billing' | 'opted_out' | 'throttled' | 'auth' | 'template'
    | 'media' | 'invalid_request' | 'compliance' | 'experiment' | 'provider' | 'unknown';
  code: string | null;
  title: string;
  detail: string | null;
  href: string | null;
  retryable: boolean;
  owner: 'customer' | 'recipient' | 'platform' | 'vendor';
}

export type SendOutcome =
  | { ok: true; provider: string; messageId: string; cost?: Record<string, unknown> }
  | { ok: false; provider: string; failure: VendorFailure };

export type MessagingChannel = 'chatapp' | 'sms' | 'webchat' | 'workchat' | 'socialdm' | 'socialmsg';

export interface OutboundMessage {
  channel: MessagingChannel;
  /** The channel configuration pinned by the sender; null: the agent's default. */
  channelIdentifier: string | null;
  /** The channel-native address sent to (a phone number, a conversation, a user's inbox). */
  address: string;
  body:
    | { kind: 'text'; text: string }
    | { kind: 'template'; name: string; language: string; components: unknown[] }
    | { kind: 'reaction'; messageId: string; emoji: string };
}

/** A status callback: one move of a message the vendor accepted. */
export interface Receipt {
  provider: string;
  /** The vendor's own id of this event: a callback delivered twice is applied once. */
  eventId: string;
  messageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  at: Date;
  failure?: VendorFailure;
}

export type ReceiptHandler = (receipt: Receipt) => Promise<void>;

export interface MessagingPort {
  /** The provider identifier this adapter sends `channel` through (recorded on a delivery, even a queued one). */
  provider(channel: MessagingChannel): string;
  send(message: OutboundMessage): Promise<SendOutcome>;
  /** Where the adapter hands the callbacks it receives itself (a vendor's webhook arrives through the API instead). */
  onReceipt(handler: ReceiptHandler): void;
  close(): Promise<void>;
}
