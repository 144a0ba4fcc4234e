/**
 * Channel sends, delivery records and their status moves, without fastify:
 * the routes hand in what the kernel established (organization, agent, the
 * idempotency key) and the checked body.
 *
 * A send resolves its recipient (recipients.ts), checks the chat-app window,
 * sends through the vendor's port (or queues), then records the delivery and
 * completes its idempotency key in one transaction (without a key, the
 * delivery and its audit entry are one statement). A refusal throws before
 * anything is sent and records nothing.
 */
import { newId } from '../../model/ids.js';
import { withIdempotency } from '../../api/kernel/idempotency.js';
import { agentFactsOf } from '../../api/kernel/auth.js';
import type { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import type { AuditEntry } from '../../store/audit-repo.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Vendors } from '../../vendors/index.js';
import type { MailAttachment } from '../../vendors/mail/port.js';
import type { MessagingChannel, OutboundMessage, Receipt, SendOutcome, TemplateRecipient, VendorFailure } from '../../vendors/messaging/port.js';
import { refused } from './errors.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { canMove, receiptTimeProblem, type Delivery, type DeliveryOrigin, type DeliveryStatus, type Failure, type HistoryEntry, type Recipient, type SendChannel } from './model.js';
import { createChannelsRepo, type DeliveryFilter, type InboundMessage } from './repository.js';
import type { ChannelNotification, ChannelNotificationOutcome, FamilyMetrics } from '../platform-deps.js';
import { resolveRecipient, type Resolved } from './recipients.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';
import { deliveryReadForm, type DeliveryReadForm } from './read-form.js';
import { bracketed, brandedEmail, renderRichBody, richBodyText } from './email-render.js';

export const WINDOW_MS = 24 * 3_600_000;
export const REACTION_MAX_AGE_MS = 30 * 86_400_000;
/** How long a send waits for a concurrent one with its idempotency key before answering 409 in progress. */
const IN_PROGRESS_WAIT_MS = 15_000;

export interface SendResult {
  deliveryId: string;
  status: DeliveryStatus;
  delivered: boolean;
  recorded: boolean;
  queuedForWindow: boolean;
  userId: string | null;
  address: string | null;
  messageId: string | null;
  warning?: string;
  /** Only on a replay of an X-Idempotency-Key: this request sent nothing, the answer is the first send's. */
  idempotentReplay?: true;
}

export interface SendContext {
  orgId: string;
  agentId: string;
  idempotencyKey: string | undefined;
  /** The delivery's origin (spec 03 part 2.3); absent: `channels_send`, the send routes'. */
  origin?: DeliveryOrigin;
  /** The delivery's id, when the sender chose it (a notification); absent: a new one. */
  deliveryId?: string;
  /** Who sent it, for the audit entry; absent: the platform itself (a run-end notification). */
  actor?: { type: 'user' | 'api_key'; id: string };
}

export interface TextSend {
  channel: SendChannel;
  to: Recipient;
  text: string;
  options?: { channelIdentifier?: string; chatapp?: { onClosedWindow?: 'queue' | 'fail' } };
}
export interface TemplateSend {
  to: Recipient;
  templateName: string;
  language?: string;
  components?: unknown[];
  text?: string;
  channelIdentifier?: string;
}
export interface ReactionSend {
  to: Recipient;
  messageId: string;
  emoji: string;
  channelIdentifier?: string;
}
/** One recipient of the bulk template trigger: exactly one of `userId` and `phoneNumber` (the schema's rule). */
export interface TriggerRecipient {
  userId?: string;
  phoneNumber?: string;
  params?: Record<string, string>;
}
export interface TemplateTriggerSend {
  /** The user the credential acts for (the audit entry's actor). */
  userId: string;
  /** The chat-app channel configuration sent from (`:channelId`). */
  channelId: string;
  templateId: string;
  recipients: readonly TriggerRecipient[];
}
/** The vendor's own per-recipient responses, in the recipients' order (contract C20). */
export interface TriggerResult {
  results: Record<string, unknown>[];
}

/** Recipient problems named in a refused trigger's message, at most (the rest counted). */
const TRIGGER_PROBLEMS_NAMED = 10;

export interface AttachmentRef {
  filename: string;
  contentType: string;
  url: string;
}
export interface EmailSend {
  to: Recipient;
  text?: string;
  html?: string;
  richBody?: string;
  subject?: string;
  cc?: string[];
  bcc?: string[];
  attachments?: AttachmentRef[];
  inReplyTo?: string;
  references?: string[];
  channelIdentifier?: string;
}

/** Fetches an email's attachments (all or none), or throws the refusal the send answers. */
export type AttachmentFetcher = (refs: readonly AttachmentRef[]) => Promise<MailAttachment[]>;

export interface ChannelServiceDeps {
  store: KernelStore;
  vendors: Vendors;
  logger: Logger;
  fetchAttachments: AttachmentFetcher;
  queueExpiryMs: number;
  now?: () => Date;
  /** Sends recorded and receipts applied (/metrics). */
  metrics?: FamilyMetrics;
  /** The read caches the deliveries list answers from (an API process; absent: every list reads the store). */
  reads?: ReadCaches;
}

/**
 * The read-cache topic of the delivery records (api/kernel/read-cache.ts). Every write of
 * `channel_deliveries` says so, in every process (the worker's notifications and receipts too): the
 * sends' and the bulk trigger's units of work and a receipt's (`tx.changed`), and the moves made
 * outside a unit of work, a queued send's flush and the sweep's (`store.changed`, once they committed).
 */
export const DELIVERIES_TOPIC = 'channels.deliveries';

/** A reaction's emoji: one emoji (a single grapheme cluster), or "" to remove the reaction. */
// The `v` flag (Unicode sets; Node 20) through the constructor: the compiler's target predates it.
const EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
export function isSingleEmoji(s: string): boolean {
  return [...segmenter.segment(s)].length === 1 && EMOJI.test(s);
}

const newDeliveryId = (): string => `dlv_${newId()}`;

const QUEUED_PLUS_ONE_WARNING =
  'Queued until the end user writes again; +1 (US and Canada) numbers often cannot receive chat-app messages outside the window, consider an sms send or a template.';

const EXPIRED: VendorFailure = {
  category: 'window_closed', code: null, title: 'The chat-app window did not reopen',
  detail: 'The end user did not write again before the queued send expired.', href: null, retryable: false, owner: 'recipient',
};


export function createChannelService(deps: ChannelServiceDeps) {
  const { store, vendors, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const repo = createChannelsRepo(store.sql);
  // The deliveries list's answers by agent and filter, serialized.
  const answers = deps.reads?.cache<Buffer>(DELIVERIES_TOPIC);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /**
   * Runs a send once per idempotency key of the agent (contract C10); a replay answers where the
   * first send stands now, marked `idempotentReplay` (whatever its body: a new message under a used
   * key is not sent, and the client must be able to tell).
   */
  async function once(ctx: SendContext, run: (claim: { claimId: string; key: string } | undefined) => Promise<SendResult>): Promise<SendResult> {
    if (ctx.idempotencyKey === undefined) return run(undefined);
    const key = ctx.idempotencyKey;
    const ref = { scope: `agent:${ctx.agentId}`, route: 'channels:send', key };
    const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
    for (;;) {
      try {
        // Every send route shares the key space and any reuse replays: one fingerprint for all.
        const r = await withIdempotency(store.idempotency, { ...ref, fingerprint: 'channels-send' }, async ({ claimId }) => ({ status: 200, body: await run({ claimId, key }) }));
        if (!r.replayed) return r.body as SendResult;
        const first = r.body as SendResult;
        const current = await repo.getDelivery(ctx.agentId, first.deliveryId);
        return { ...first, ...(current ? { status: current.status } : {}), idempotentReplay: true };
      } catch (e) {
        // A concurrent send with this key is running: wait for its outcome, then replay it.
        if ((e as AppError).code === 'IDEMPOTENCY_KEY_IN_PROGRESS' && Date.now() < deadline) {
          await sleep(25);
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * Records the delivery and completes the idempotency key in one commit; answers the send result.
   * Without a key to complete, the delivery and its audit entry are one statement of their own.
   */
  async function record(ctx: SendContext, claim: { claimId: string; key: string } | undefined, d: Delivery, result: SendResult, pending: unknown = null): Promise<SendResult> {
    // What was sent, to whom and with what text stays in the delivery record: the entry names it only.
    const entry: AuditEntry = {
      id: newId(), orgId: ctx.orgId, action: 'channels.message.sent', actor: ctx.actor ?? { type: 'system', id: d.origin }, targetType: 'channel_delivery', targetId: d.id,
      details: { agentId: ctx.agentId, channel: d.channel, origin: d.origin, status: d.status }, at: new Date(),
    };
    if (claim) {
      await store.unitOfWork(async (tx) => {
        tx.changed(DELIVERIES_TOPIC);
        await createChannelsRepo(tx.sql).insertDelivery(d, pending);
        await tx.audit(entry);
        await tx.idempotency.complete({ scope: `agent:${ctx.agentId}`, route: 'channels:send', key: claim.key, claimId: claim.claimId }, { status: 200, body: result });
      });
    } else {
      await repo.insertDeliveryAudited(d, pending, entry);
      store.changed(DELIVERIES_TOPIC);
    }
    deps.metrics?.channelSend(d.channel, d.status);
    return result;
  }

  function delivery(ctx: SendContext, fields: {
    channel: SendChannel; channelIdentifier: string | null; from: string; to: Recipient; resolved: Pick<Resolved, 'userId' | 'address'>;
    template?: string | null; origin?: DeliveryOrigin; id?: string;
  }, outcome: SendOutcome | { queued: true; provider: string }, at: Date): Delivery {
    const status: DeliveryStatus = 'queued' in outcome ? 'queued' : outcome.ok ? 'accepted' : 'failed';
    return {
      id: fields.id ?? ctx.deliveryId ?? newDeliveryId(), orgId: ctx.orgId, agentId: ctx.agentId, channel: fields.channel, channelIdentifier: fields.channelIdentifier,
      from: fields.from, to: fields.to, userId: fields.resolved.userId, address: fields.resolved.address, provider: outcome.provider,
      origin: fields.origin ?? ctx.origin ?? 'channels_send', status,
      failure: 'queued' in outcome || outcome.ok ? null : { ...outcome.failure, provider: outcome.provider },
      history: [{ status, at: at.toISOString(), source: 'send' }],
      messageId: 'queued' in outcome || !outcome.ok ? null : outcome.messageId,
      template: fields.template ?? null, idempotencyKey: ctx.idempotencyKey ?? null,
      cost: 'queued' in outcome || !outcome.ok ? null : (outcome.cost ?? null), createdAt: at, updatedAt: at,
    };
  }

  function resultOf(d: Delivery, resolved: Resolved, warning?: string): SendResult {
    return {
      deliveryId: d.id, status: d.status, delivered: d.status === 'accepted', recorded: !resolved.conversationScoped,
      queuedForWindow: d.status === 'queued', userId: d.userId, address: d.address, messageId: d.messageId, ...(warning ? { warning } : {}),
    };
  }

  const senderOf = (channel: SendChannel, channelIdentifier: string | null, agentId: string) => channelIdentifier ?? `${channel}:${agentId}`;

  /** The agent as the kernel's access check read it for this request: no statement of its own. */
  async function agentOf(agentId: string) {
    const agent = await agentFactsOf(store, agentId);
    if (!agent) throw refused(`Unknown agent ${agentId}`);
    return agent;
  }

  /** Whether the chat-app window to this recipient is open (contract C8). */
  async function windowOpen(agentId: string, resolved: Resolved, at: Date): Promise<boolean> {
    const newest = resolved.userId !== null
      ? await repo.newestFromUser(agentId, resolved.userId, 'chatapp')
      : await repo.newestFromAddress(agentId, 'chatapp', resolved.address);
    return newest !== undefined && at.getTime() - newest.receivedAt.getTime() <= WINDOW_MS;
  }

  async function sendEmail(ctx: SendContext, body: EmailSend, claim: { claimId: string; key: string } | undefined): Promise<SendResult> {
    const agent = await agentOf(ctx.agentId);
    const resolved = await resolveRecipient(repo, ctx.agentId, 'email', body.to);
    const parts = [body.text, body.html, body.richBody].filter((p) => p !== undefined).length;
    if (parts !== 1) throw refused('Send exactly one of text, html and richBody');
    const attachments = body.attachments && body.attachments.length > 0 ? await deps.fetchAttachments(body.attachments) : [];
    const subject = body.subject === undefined ? `Message from ${agent.name}` : body.subject === '' ? undefined : body.subject;
    const outcome = await vendors.mail.send({
      to: resolved.address, cc: body.cc ?? [], bcc: body.bcc ?? [], subject,
      ...(body.text !== undefined ? { text: body.text } : {}),
      ...(body.html !== undefined ? { html: body.html } : {}),
      ...(body.richBody !== undefined ? { html: brandedEmail(renderRichBody(body.richBody), { agentName: agent.name }), text: richBodyText(body.richBody) } : {}),
      attachments,
      ...(body.inReplyTo !== undefined ? { inReplyTo: bracketed(body.inReplyTo) } : {}),
      references: (body.references ?? []).map(bracketed),
    });
    const at = now();
    const channelIdentifier = body.channelIdentifier ?? null;
    const d = delivery(ctx, { channel: 'email', channelIdentifier, from: senderOf('email', channelIdentifier, ctx.agentId), to: body.to, resolved }, outcome, at);
    return record(ctx, claim, d, resultOf(d, resolved));
  }

  async function sendMessage(
    ctx: SendContext, claim: { claimId: string; key: string } | undefined, to: Recipient, resolved: Resolved,
    message: OutboundMessage, template: string | null,
  ): Promise<SendResult> {
    const outcome = await vendors.messaging.send(message);
    const d = delivery(ctx, { channel: message.channel, channelIdentifier: message.channelIdentifier, from: senderOf(message.channel, message.channelIdentifier, ctx.agentId), to, resolved, template }, outcome, now());
    return record(ctx, claim, d, resultOf(d, resolved));
  }

  /** A text on any channel (an email with the subject given, else the default one). */
  async function sendText(ctx: SendContext, body: TextSend & { subject?: string }, claim: { claimId: string; key: string } | undefined): Promise<SendResult> {
    const channelIdentifier = body.options?.channelIdentifier ?? null;
    if (body.channel === 'email') {
      return sendEmail(ctx, {
        to: body.to, text: body.text, ...(channelIdentifier !== null ? { channelIdentifier } : {}), ...(body.subject !== undefined ? { subject: body.subject } : {}),
      }, claim);
    }
    await agentOf(ctx.agentId);
    const channel = body.channel as MessagingChannel;
    const resolved = await resolveRecipient(repo, ctx.agentId, channel, body.to);
    const message: OutboundMessage = { channel, channelIdentifier, address: resolved.address, body: { kind: 'text', text: body.text } };
    if (channel === 'chatapp' && !(await windowOpen(ctx.agentId, resolved, now()))) {
      if ((body.options?.chatapp?.onClosedWindow ?? 'queue') === 'fail') {
        throw refused('The chat-app 24-hour window is closed for this recipient (onClosedWindow is fail); send a template to open the conversation');
      }
      const at = now();
      const d = delivery(ctx, { channel, channelIdentifier, from: senderOf(channel, channelIdentifier, ctx.agentId), to: body.to, resolved }, { queued: true, provider: vendors.messaging.provider('chatapp') }, at);
      const warning = resolved.address.startsWith('+1') ? QUEUED_PLUS_ONE_WARNING : undefined;
      return record(ctx, claim, d, resultOf(d, resolved, warning), message);
    }
    return sendMessage(ctx, claim, body.to, resolved, message, null);
  }

  return {
    repo,

    /**
     * GET .../deliveries: the agent's delivery records, newest first, as the route answers them:
     * `encode` makes the answer's bytes of the read forms (the route's serializer). With a read cache
     * the bytes are made once per read of the store and answer every request until a write of the
     * deliveries (DELIVERIES_TOPIC) or their age bound: the 50 records are neither parsed, shaped nor
     * serialized again for each request.
     */
    deliveriesAnswer(agentId: string, f: DeliveryFilter, encode: (forms: DeliveryReadForm[]) => Buffer): Promise<Buffer> {
      const read = async () => encode((await repo.listDeliveries(agentId, f)).map(deliveryReadForm));
      if (!answers) return read();
      return answers.get([agentId, f.userId ?? '', f.status ?? '', f.channel ?? '', f.since?.toISOString() ?? '', f.limit].join('\u0000'), read);
    },

    /** POST .../send */
    send(ctx: SendContext, body: TextSend): Promise<SendResult> {
      return once(ctx, (claim) => sendText(ctx, body, claim));
    },

    /**
     * Another family's message (ChannelNotificationPort, contract W8): a text to a thread of the
     * agent, recorded under the id the caller chose with `origin: notification`. A delivery already
     * recorded under that id is answered as it stands, nothing sent. The thread is an end user's id,
     * or a `workchat` conversation id; with no channel given, a conversation's is `workchat`, an end
     * user's the one they last wrote on. The chat-app window rule is the send route's (a closed
     * window queues).
     */
    async sendNotification(n: ChannelNotification): Promise<ChannelNotificationOutcome> {
      const recorded = await repo.getDelivery(n.agentId, n.deliveryId);
      if (recorded) return notificationOutcome(recorded);
      const conversation = n.channel === undefined ? await repo.conversation(n.agentId, n.thread) : undefined;
      const channel: SendChannel | undefined = n.channel ?? (conversation ? 'workchat' : (await repo.newestFromUser(n.agentId, n.thread))?.channel);
      if (channel === undefined) {
        return { kind: 'refused', channel: null, error: { code: 'recipient_refused', message: `Unknown thread ${n.thread} for agent ${n.agentId}: neither an end user nor a workchat conversation of the agent` } };
      }
      const ctx: SendContext = { orgId: n.orgId, agentId: n.agentId, idempotencyKey: undefined, origin: 'notification', deliveryId: n.deliveryId };
      try {
        await sendText(ctx, { channel, to: conversation ? { conversationId: n.thread } : { userId: n.thread }, text: n.text, subject: n.subject }, undefined);
      } catch (e) {
        if ((e as AppError).code === 'CHANNEL_SEND_REFUSED') return { kind: 'refused', channel, error: { code: 'recipient_refused', message: (e as AppError).message } };
        throw e;
      }
      return notificationOutcome((await repo.getDelivery(n.agentId, n.deliveryId))!);
    },

    /** POST .../chatapp/template: opens a conversation whatever the window. */
    sendTemplate(ctx: SendContext, body: TemplateSend): Promise<SendResult> {
      return once(ctx, async (claim) => {
        await agentOf(ctx.agentId);
        if (body.to.userId === undefined && body.to.phoneNumber === undefined) throw refused('A template goes to a userId or a phoneNumber');
        if (body.to.userId !== undefined && !(await repo.newestFromUser(ctx.agentId, body.to.userId, 'chatapp'))) {
          throw refused(`The end user ${body.to.userId} has no chat-app conversation with this agent; address the template by phoneNumber`);
        }
        const resolved = await resolveRecipient(repo, ctx.agentId, 'chatapp', body.to);
        const channelIdentifier = body.channelIdentifier ?? null;
        const message: OutboundMessage = {
          channel: 'chatapp', channelIdentifier, address: resolved.address,
          body: { kind: 'template', name: body.templateName, language: body.language ?? 'en_US', components: body.components ?? [] },
        };
        return sendMessage(ctx, claim, body.to, resolved, message, body.templateName);
      });
    },

    /**
     * POST /admin/agents/:agentId/channels/:channelId/chatapp-templates/:templateId/trigger: a
     * chat-app template to each recipient in one vendor call, whatever the window (a template opens
     * the conversation). Every recipient is checked first, as the template route checks its one (a
     * `userId` needs a chat-app conversation with the agent; a `phoneNumber` cold-starts): any
     * refusal refuses the whole trigger, naming the recipients by index, and nothing is sent or
     * recorded. Otherwise each recipient's message becomes one delivery record (origin `template`),
     * all recorded in one statement with the audit entry `channels.template.triggered` (counts
     * only: no recipient's number or id), and the answer is the vendor's own responses in order.
     */
    async triggerTemplate(ctx: SendContext, body: TemplateTriggerSend): Promise<TriggerResult> {
      await agentOf(ctx.agentId);
      const userIds = body.recipients.flatMap((r) => (r.userId !== undefined ? [r.userId] : []));
      const numbers = body.recipients.flatMap((r) => (r.phoneNumber !== undefined ? [r.phoneNumber] : []));
      const [addressOf, userAt] = await Promise.all([repo.chatappAddressesOf(ctx.agentId, userIds), repo.chatappUsersAt(ctx.agentId, numbers)]);
      const problems: string[] = [];
      const resolved = body.recipients.map((r, i) => {
        if (r.phoneNumber !== undefined) return { userId: userAt.get(r.phoneNumber) ?? null, address: r.phoneNumber };
        const address = addressOf.get(r.userId!);
        if (address === undefined) problems.push(`recipients[${i}]: the end user ${r.userId} has no chat-app conversation with this agent; address them by phoneNumber`);
        return { userId: r.userId!, address: address ?? '' };
      });
      if (problems.length > 0) {
        const more = problems.length - TRIGGER_PROBLEMS_NAMED;
        throw refused(`${problems.slice(0, TRIGGER_PROBLEMS_NAMED).join('; ')}${more > 0 ? `; and ${more} more` : ''}`);
      }
      const ids = body.recipients.map(() => newDeliveryId());
      const recipients: TemplateRecipient[] = body.recipients.map((r, i) => ({ reference: ids[i]!, address: resolved[i]!.address, params: r.params ?? {} }));
      const answers = await vendors.messaging.triggerTemplate({ channelId: body.channelId, templateId: body.templateId, recipients });
      if (answers.length !== recipients.length) throw new Error(`the messaging port answered ${answers.length} results for ${recipients.length} recipients`);
      const at = now();
      const deliveries = body.recipients.map((r, i) => delivery(ctx, {
        id: ids[i]!, channel: 'chatapp', channelIdentifier: body.channelId, from: senderOf('chatapp', body.channelId, ctx.agentId),
        to: r.userId !== undefined ? { userId: r.userId } : { phoneNumber: r.phoneNumber! }, resolved: resolved[i]!,
        template: body.templateId, origin: 'template',
      }, answers[i]!.outcome, at));
      await store.unitOfWork(async (tx) => {
        tx.changed(DELIVERIES_TOPIC);
        await createChannelsRepo(tx.sql).insertDeliveries(deliveries);
        const accepted = deliveries.filter((d) => d.status === 'accepted').length;
        await tx.audit({
          orgId: ctx.orgId, action: 'channels.template.triggered', actor: ctx.actor ?? { type: 'user', id: body.userId }, targetType: 'agent', targetId: ctx.agentId,
          details: { channelId: body.channelId, templateId: body.templateId, recipients: deliveries.length, accepted, failed: deliveries.length - accepted },
        });
      });
      const byStatus = new Map<DeliveryStatus, number>();
      for (const d of deliveries) byStatus.set(d.status, (byStatus.get(d.status) ?? 0) + 1);
      for (const [status, n] of byStatus) deps.metrics?.channelSend('chatapp', status, n);
      return { results: answers.map((a) => a.raw) };
    },

    /** POST .../chatapp/reaction */
    sendReaction(ctx: SendContext, body: ReactionSend): Promise<SendResult> {
      return once(ctx, async (claim) => {
        await agentOf(ctx.agentId);
        if (body.emoji !== '' && !isSingleEmoji(body.emoji)) throw refused('emoji must be a single emoji, or an empty string to remove the reaction');
        const resolved = await resolveRecipient(repo, ctx.agentId, 'chatapp', body.to);
        const inbound = await repo.inboundByMessageId(ctx.agentId, body.messageId);
        const sent = inbound ? undefined : await repo.sentMessage(ctx.agentId, body.messageId);
        const born = inbound?.receivedAt ?? sent?.createdAt;
        if (born === undefined) throw refused(`Unknown messageId ${body.messageId} for this agent`);
        if (now().getTime() - born.getTime() > REACTION_MAX_AGE_MS) throw refused('Reactions are accepted on messages up to 30 days old');
        const channelIdentifier = body.channelIdentifier ?? null;
        const message: OutboundMessage = { channel: 'chatapp', channelIdentifier, address: resolved.address, body: { kind: 'reaction', messageId: body.messageId, emoji: body.emoji } };
        return sendMessage(ctx, claim, body.to, resolved, message, null);
      });
    },

    /** POST .../email/send */
    sendEmail(ctx: SendContext, body: EmailSend): Promise<SendResult> {
      return once(ctx, (claim) => sendEmail(ctx, body, claim));
    },

    /**
     * A receipt: moves its delivery forward (or to failed), once per vendor event id of the
     * delivery's organization. `orgId`: only a delivery of that organization is looked for (the
     * receipt route's key); another organization's delivery with the same message id is not seen.
     */
    async applyReceipt(r: Receipt, orgId?: string): Promise<{ duplicate: boolean; deliveryId: string | null; status: DeliveryStatus | null }> {
      const d = await repo.deliveryByMessageId(r.messageId, r.provider, orgId);
      // A receipt of no delivery (yet) is not claimed: the vendor's retry may find it recorded.
      if (!d) return { duplicate: false, deliveryId: null, status: null };
      let moved: DeliveryStatus | undefined;
      const applied = await store.unitOfWork(async (tx) => {
        moved = undefined;
        const txRepo = createChannelsRepo(tx.sql);
        if (!(await txRepo.claimReceiptEvent(d.orgId, r.provider, r.eventId, d.id, now()))) {
          const current = await txRepo.getDelivery(d.agentId, d.id);
          return { duplicate: true, deliveryId: d.id, status: current?.status ?? null };
        }
        for (let attempt = 0; attempt < 3; attempt++) {
          const current = (await txRepo.getDelivery(d.agentId, d.id))!;
          if (!canMove(current.status, r.status)) return { duplicate: false, deliveryId: d.id, status: current.status };
          const entry: HistoryEntry = { status: r.status, at: r.at.toISOString(), source: 'callback' };
          const failure: Failure | undefined = r.status === 'failed' ? { ...(r.failure ?? UNKNOWN_FAILURE), provider: r.provider } : undefined;
          if (await txRepo.move(d.id, current.status, r.status, entry, failure ? { failure } : {})) {
            tx.changed(DELIVERIES_TOPIC);
            moved = r.status;
            return { duplicate: false, deliveryId: d.id, status: r.status };
          }
        }
        const last = await txRepo.getDelivery(d.agentId, d.id);
        return { duplicate: false, deliveryId: d.id, status: last?.status ?? null };
      });
      // Counted once committed (a transaction tried again starts the count afresh).
      if (moved !== undefined) deps.metrics?.channelReceiptApplied(moved);
      return applied;
    },

    /**
     * An end user's message to the agent (a vendor callback): recorded, and on the chat-app it
     * reopens the window, so what was queued for that user goes out now. A message recorded before
     * (the same message id under another event id) is not the user writing again: it sends nothing.
     */
    async recordInbound(m: InboundMessage): Promise<{ recorded: boolean; flushed: string[] }> {
      const recorded = await repo.insertInbound(m);
      const flushed: string[] = [];
      if (m.channel !== 'chatapp' || !recorded) return { recorded, flushed };
      for (const { delivery: d, pending } of await repo.queuedFor(m.agentId, m.userId, m.address)) {
        const message = pending as OutboundMessage;
        const outcome = await vendors.messaging.send({ ...message, address: d.address ?? m.address });
        const at = now().toISOString();
        // The flush is a send (contract C20): the record keeps its id and takes the origin
        // queued_flush, and the history entry of this send says so.
        const moved = outcome.ok
          ? await repo.move(d.id, 'queued', 'accepted', { status: 'accepted', at, source: 'send', origin: 'queued_flush' }, { messageId: outcome.messageId, provider: outcome.provider, origin: 'queued_flush' })
          : await repo.move(d.id, 'queued', 'failed', { status: 'failed', at, source: 'send', origin: 'queued_flush' }, { failure: { ...outcome.failure, provider: outcome.provider }, provider: outcome.provider, origin: 'queued_flush' });
        if (moved) {
          store.changed(DELIVERIES_TOPIC);
          flushed.push(d.id);
        }
      }
      return { recorded, flushed };
    },

    /**
     * A receipt's `at` or `receivedAt` as given (now when not given), refused with a 400 naming the
     * field outside the window around this service's clock (model.ts), before anything is recorded.
     */
    receiptTime(field: 'at' | 'receivedAt', text: string | undefined): Date {
      const current = now();
      if (text === undefined) return current;
      const at = new Date(text);
      const problem = receiptTimeProblem(field, at.getTime(), current.getTime());
      if (problem) throw KernelErrors.VALIDATION_FAILED(problem, { field, message: [problem] });
      return at;
    },

    /** An inbound message from the receipt route: its agent must be of the key's organization; once per vendor event id. */
    async recordInboundEvent(orgId: string, e: { provider: string; eventId: string; agentId: string; userId: string; channel: SendChannel; address: string; conversationId?: string; messageId: string; receivedAt: Date }) {
      const agent = await repo.agent(e.agentId);
      if (!agent || agent.orgId !== orgId) throw refused(`Unknown agent ${e.agentId}`);
      if (!(await repo.claimReceiptEvent(orgId, e.provider, e.eventId, null, now()))) return { duplicate: true, deliveryId: null, status: null, flushed: [] };
      const { flushed } = await this.recordInbound({
        agentId: e.agentId, userId: e.userId, channel: e.channel, address: e.address, conversationId: e.conversationId ?? null,
        messageId: e.messageId, receivedAt: e.receivedAt,
      });
      return { duplicate: false, deliveryId: null, status: null, flushed };
    },

    /** Expires what waited too long: queued sends older than the queue expiry. Returns how many moved. */
    async sweep(at: Date = now()): Promise<number> {
      const before = new Date(at.getTime() - deps.queueExpiryMs);
      let moved = 0;
      for (;;) {
        const batch = await repo.queuedOlderThan(before, 200);
        const movedBefore = moved;
        for (const { id } of batch) {
          if (await repo.move(id, 'queued', 'expired', { status: 'expired', at: at.toISOString(), source: 'sweep' }, { failure: { ...EXPIRED, provider: 'platform' } })) moved++;
        }
        if (moved > movedBefore) store.changed(DELIVERIES_TOPIC);
        if (batch.length < 200) break;
      }
      if (moved > 0) logger.info({ event: 'channels.sweep', expired: moved }, 'queued channel sends expired');
      return moved;
    },
  };
}

/** What a recorded notification delivery tells its sender. */
function notificationOutcome(d: Delivery): ChannelNotificationOutcome {
  if (d.status !== 'failed' && d.status !== 'expired') return { kind: 'sent', channel: d.channel, deliveryId: d.id, status: d.status };
  const f = d.failure;
  return {
    kind: 'failed', channel: d.channel, deliveryId: d.id, retryable: f?.retryable ?? false,
    error: { code: f?.code ?? f?.category ?? 'unknown', message: f?.title ?? 'The vendor refused the message' },
  };
}

const UNKNOWN_FAILURE: VendorFailure = { category: 'unknown', code: null, title: 'The vendor reported a failure', detail: null, href: null, retryable: false, owner: 'vendor' };

export type ChannelService = ReturnType<typeof createChannelService>;
