/**
 * The mail vendor's port. The embedded default is the sandbox; EMAIL_SMTP_URL
 * selects the SMTP adapter (src/vendors/index.ts).
 */
import type { SendOutcome } from '../messaging/port.js';

export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface MailMessage {
  to: string;
  cc: readonly string[];
  bcc: readonly string[];
  /** undefined: the message carries no Subject header at all. */
  subject: string | undefined;
  text?: string;
  html?: string;
  attachments: readonly MailAttachment[];
  /** A message id in angle brackets. */
  inReplyTo?: string;
  /** Message ids in angle brackets, oldest first. */
  references: readonly string[];
}

export interface MailPort {
  /** On success `messageId` is the Message-ID the message went out with. */
  send(message: MailMessage): Promise<SendOutcome>;
  close(): Promise<void>;
}
