/**
 * The real mail adapter: SMTP through nodemailer, selected by EMAIL_SMTP_URL
 * (`smtp://` or `smtps://`, credentials in the URL), sending as EMAIL_FROM.
 * The send's message id is the Message-ID the message went out with; a
 * refusal of the server becomes a failure object (5xx on the message or a
 * recipient: the customer's request; anything else: the vendor's, retryable).
 */
import type { Transporter } from 'nodemailer';
import type { VendorFailure } from '../messaging/port.js';
import type { MailPort } from './port.js';

export const SMTP_PROVIDER = 'smtp';

export function createSmtpMail(opts: { url: string; from: string; timeoutMs?: number }): MailPort {
  const timeout = opts.timeoutMs ?? 30_000;
  // nodemailer is loaded with the first message, not with the process: a process that sends no
  // mail never pays for it (some 10 MB of memory).
  let transport: Promise<Transporter> | undefined;
  const transportOf = () => (transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(opts.url, {
    connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout,
  } as never)));
  return {
    async send(m) {
      try {
        const info = await (await transportOf()).sendMail({
          from: opts.from,
          to: m.to,
          ...(m.cc.length > 0 ? { cc: [...m.cc] } : {}),
          ...(m.bcc.length > 0 ? { bcc: [...m.bcc] } : {}),
          ...(m.subject !== undefined ? { subject: m.subject } : {}),
          ...(m.text !== undefined ? { text: m.text } : {}),
          ...(m.html !== undefined ? { html: m.html } : {}),
          ...(m.inReplyTo !== undefined ? { inReplyTo: m.inReplyTo } : {}),
          ...(m.references.length > 0 ? { references: [...m.references] } : {}),
          attachments: m.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
        });
        return { ok: true, provider: SMTP_PROVIDER, messageId: info.messageId };
      } catch (e) {
        return { ok: false, provider: SMTP_PROVIDER, failure: smtpFailure(e) };
      }
    },
    async close() {
      // A transport never made has nothing to close.
      if (transport) (await transport).close();
    },
  };
}

export function smtpFailure(e: unknown): VendorFailure {
  const err = e as { responseCode?: number; response?: string; code?: string; message?: string };
  const code = err.responseCode !== undefined ? String(err.responseCode) : (err.code ?? null);
  const detail = (err.response ?? err.message ?? 'the SMTP server refused the message').slice(0, 500);
  if (err.responseCode !== undefined && err.responseCode >= 500) {
    return { category: 'invalid_request', code, title: 'The mail server refused the message', detail, href: null, retryable: false, owner: 'customer' };
  }
  return { category: 'provider', code, title: 'The mail server could not take the message', detail, href: null, retryable: true, owner: 'vendor' };
}
