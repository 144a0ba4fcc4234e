/**
 * The in-process messaging sandbox, the embedded default. It accepts every
 * send at once with a fresh message id and plays the receipts the channels
 * contract fixes, by the recipient's phone number (`sms`, `chatapp`):
 *
 *   ...9999  one `failed` receipt (unreachable, owner recipient, not retryable)
 *   ...7777  `sent`, `delivered`, `read`, in that order
 *   other    no receipt: the delivery stays `accepted`
 *
 * Each receipt follows the previous step after `stepMs` (at most 2 seconds).
 *
 * A bulk template trigger is a chat-app template send to each recipient, with
 * the same receipts; each recipient's response is `{to, status, deliveryId}`
 * (`to` the number sent to, `deliveryId` the sender's reference echoed), the
 * shape of contract C20. The sandbox accepts every recipient (C14), so its
 * `status` is `accepted` and it never gives the `error` a refusal would carry.
 */
import { randomUUID } from 'node:crypto';
import type { MessagingPort, OutboundMessage, Receipt, ReceiptHandler, SendOutcome, TemplateTrigger, TemplateTriggerResult, VendorFailure } from './port.js';

export const sandboxProvider = (channel: string): string => `sandbox-${channel}`;

export const UNREACHABLE: VendorFailure = {
  category: 'unreachable', code: 'sandbox_unreachable', title: 'Recipient unreachable',
  detail: 'The sandbox vendor fails every number ending in 9999.', href: null, retryable: false, owner: 'recipient',
};

export function plannedReceipts(message: OutboundMessage): Receipt['status'][] {
  if (message.channel !== 'sms' && message.channel !== 'chatapp') return [];
  if (message.address.endsWith('9999')) return ['failed'];
  if (message.address.endsWith('7777')) return ['sent', 'delivered', 'read'];
  return [];
}

export function createSandboxMessaging(opts: { stepMs: number }): MessagingPort {
  const handlers: ReceiptHandler[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  const emit = (receipt: Receipt) => Promise.all(handlers.map((h) => h(receipt).catch(() => {})));
  /** Accepts one message at once and schedules its receipts. */
  function accept(message: OutboundMessage): SendOutcome {
    const provider = sandboxProvider(message.channel);
    const messageId = `sbx_${randomUUID()}`;
    const steps = plannedReceipts(message);
    // Receipts one after the other, each `stepMs` after the previous one was applied.
    const play = (i: number) => {
      if (closed || i >= steps.length) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        const status = steps[i]!;
        void emit({ provider, eventId: `${messageId}:${status}`, messageId, status, at: new Date(), ...(status === 'failed' ? { failure: UNREACHABLE } : {}) })
          .then(() => play(i + 1));
      }, opts.stepMs);
      timer.unref();
      timers.add(timer);
    };
    play(0);
    return { ok: true, provider, messageId };
  }
  return {
    provider: sandboxProvider,
    async send(message: OutboundMessage): Promise<SendOutcome> {
      return accept(message);
    },
    async triggerTemplate(trigger: TemplateTrigger): Promise<TemplateTriggerResult[]> {
      return trigger.recipients.map((r) => {
        const outcome = accept({
          channel: 'chatapp', channelIdentifier: trigger.channelId, address: r.address,
          body: { kind: 'template', name: trigger.templateId, language: 'en_US', components: [] },
        });
        return { raw: { to: r.address, status: 'accepted', deliveryId: r.reference }, outcome };
      });
    },
    onReceipt(handler) {
      handlers.push(handler);
    },
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
