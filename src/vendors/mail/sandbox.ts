/** The in-process mail sandbox, the embedded default: every message accepted at once, no receipt. */
import { randomUUID } from 'node:crypto';
import type { MailMessage, MailPort } from './port.js';

export const MAIL_SANDBOX_PROVIDER = 'sandbox-email';

export function createSandboxMail(): MailPort & { readonly sent: MailMessage[] } {
  const sent: MailMessage[] = [];
  return {
    sent,
    async send(message) {
      // Kept for inspection in-process; bounded so a long-running embedded server does not grow.
      sent.push(message);
      if (sent.length > 100) sent.shift();
      return { ok: true, provider: MAIL_SANDBOX_PROVIDER, messageId: `<${randomUUID()}@sandbox.invalid>` };
    },
    async close() {},
  };
}
