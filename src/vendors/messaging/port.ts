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

/** One recipient of a bulk chat-app template trigger. */
export interface TemplateRecipient {
  /** The sender's own id of this message (the platform's delivery id), which a vendor may echo. */
  reference: string;
  /** The phone number sent to (E.164 with `+`). */
  address: string;
  /** The template's parameter values by name (`"1"`, `"2"` for positional ones). */
  params: Readonly<Record<string, string>>;
}

/** A chat-app template sent to many recipients in one vendor call. */
export interface TemplateTrigger {
  /** The chat-app channel configuration (the sending number's id at the vendor). */
  channelId: string;
  templateId: string;
  recipients: readonly TemplateRecipient[];
}

/**
 * The vendor's answer for one recipient of a trigger: its own response object, passed through to the
 * caller as it came (contract C20), and what it means for the delivery record.
 */
export interface TemplateTriggerResult {
  raw: Record<string, unknown>;
  outcome: SendOutcome;
}

export interface MessagingPort {
  /** The provider identifier this adapter sends `channel` through (recorded on a delivery, even a queued one). */
  provider(channel: MessagingChannel): string;
  send(message: OutboundMessage): Promise<SendOutcome>;
  /** Sends a chat-app template to every recipient; one result per recipient, in the recipients' order. */
  triggerTemplate(trigger: TemplateTrigger): Promise<TemplateTriggerResult[]>;
  /** Where the adapter hands the callbacks it receives itself (a vendor's webhook arrives through the API instead). */
  onReceipt(handler: ReceiptHandler): void;
  close(): Promise<void>;
}
