/**
 * Delivery records (spec 03 part 2.3, contract C4) and the moves between
 * their statuses (part 3): a send starts at `accepted` (or `queued` for a
 * closed chat-app window); receipts move it forward through `sent`,
 * `delivered`, `read`, or to `failed`; the sweep expires what waited too
 * long. `failed` and `expired` are terminal, and a status never moves back
 * (a late `sent` after `delivered` changes nothing).
 */
import type { VendorFailure } from '../../vendors/messaging/port.js';

export const SEND_CHANNELS = ['chatapp', 'sms', 'email', 'webchat', 'workchat', 'socialdm', 'socialmsg'] as const;
export type SendChannel = (typeof SEND_CHANNELS)[number];

export const DELIVERY_STATUSES = ['queued', 'accepted', 'sent', 'delivered', 'read', 'failed', 'expired'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * How far a receipt's `at` or `receivedAt` may lie from now: a vendor retries a callback for days,
 * not months, and a clock runs minutes ahead at most. An inbound message dated later would hold the
 * chat-app window open until then (a year 9999 one for ever); one dated months back is no receipt
 * of a delivery this service still moves.
 */
export const RECEIPT_PAST_DAYS = 30;
export const RECEIPT_FUTURE_MINUTES = 5;

/** The rule a receipt's time outside the window breaks, or undefined within it. */
export function receiptTimeProblem(field: 'at' | 'receivedAt', atMs: number, nowMs: number): string | undefined {
  if (atMs >= nowMs - RECEIPT_PAST_DAYS * 86_400_000 && atMs <= nowMs + RECEIPT_FUTURE_MINUTES * 60_000) return undefined;
  return `${field} must lie within ${RECEIPT_PAST_DAYS} days before now and ${RECEIPT_FUTURE_MINUTES} minutes after`;
}

/**
 * Where a delivery record comes from (spec 03 part 2.3, contract C20): `channels_send` the four send
 * routes; `queued_flush` a queued send that went out when the end user wrote again (the record keeps
 * its id and takes this origin, and the history entry of the flush, `source: send`, names it);
 * `notification` workflow notifications and callbacks; `template` template-triggered sends, the
 * bulk trigger among them.
 */
export const DELIVERY_ORIGINS = ['channels_send', 'queued_flush', 'notification', 'template'] as const;
export type DeliveryOrigin = (typeof DELIVERY_ORIGINS)[number];

export type HistorySource = 'send' | 'callback' | 'sweep';
export interface HistoryEntry {
  status: DeliveryStatus;
  at: string;
  source: HistorySource;
  /** On an entry that changed the record's origin (a queued send's flush): that origin. */
  origin?: DeliveryOrigin;
}

export interface Failure extends VendorFailure {
  provider: string;
}

export interface Recipient {
  userId?: string;
  phoneNumber?: string;
  email?: string;
  conversationId?: string;
}

export interface Delivery {
  id: string;
  orgId: string;
  agentId: string;
  channel: SendChannel;
  channelIdentifier: string | null;
  from: string;
  to: Recipient;
  userId: string | null;
  address: string | null;
  provider: string;
  origin: DeliveryOrigin;
  status: DeliveryStatus;
  failure: Failure | null;
  history: HistoryEntry[];
  messageId: string | null;
  template: string | null;
  idempotencyKey: string | null;
  cost: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

export const TERMINAL: ReadonlySet<DeliveryStatus> = new Set(['failed', 'expired']);
const RANK: Record<Exclude<DeliveryStatus, 'failed' | 'expired'>, number> = { queued: 0, accepted: 1, sent: 2, delivered: 3, read: 4 };

/** Whether a delivery at `from` may move to `to`: never out of a terminal status, never backwards. */
export function canMove(from: DeliveryStatus, to: DeliveryStatus): boolean {
  if (TERMINAL.has(from) || from === to) return false;
  if (TERMINAL.has(to)) return true;
  return RANK[to as keyof typeof RANK] > RANK[from as keyof typeof RANK];
}
