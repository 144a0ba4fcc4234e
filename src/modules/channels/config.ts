/**
 * The channel sends' slice of the configuration (`config.channels`; docs/api-channels.md): the mail
 * adapter, attachment fetching, the status sweep and the sandbox receipts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { int, list, optionalStr, str, type DeepReadonly } from '../../config/env-schema.js';

export const channelsConfigSchema = Type.Object({
  smtpUrl: optionalStr('EMAIL_SMTP_URL', '`smtp://` or `smtps://` (credentials in the URL): email goes out over SMTP; unset: the mail sandbox', {
    pattern: '^smtps?://[^/]', formMessage: 'EMAIL_SMTP_URL must be an smtp:// or smtps:// URL',
  }),
  emailFrom: str('EMAIL_FROM', 'no-reply@logdrain.invalid', 'the sender of every email', {
    pattern: '^[^\\s@<>]+@[^\\s@<>]+$|^[^<>]*<[^\\s@<>]+@[^\\s@<>]+>$', formMessage: 'EMAIL_FROM must be an email address (optionally "Name <address>")',
  }),
  attachmentAllowHosts: list('ATTACHMENT_FETCH_ALLOW_HOSTS', 'hosts exempt from the private-address rule of attachment fetches (local testing only; HTTPS still required)', { lowercase: true }),
  attachmentTimeoutMs: int('ATTACHMENT_FETCH_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }, 'the longest all of one email\'s attachments may take to fetch'),
  queueExpiryMs: int('CHANNEL_QUEUE_EXPIRY_MS', 7 * 86_400_000, { min: 1000 }, 'a send queued for a closed chat-app window expires after this long without the end user writing'),
  sweepIntervalMs: int('CHANNEL_SWEEP_INTERVAL_MS', 60_000, { min: 0, max: 86_400_000 }, 'how often the status sweep runs; `0`: never'),
  sandboxReceiptStepMs: int('SANDBOX_RECEIPT_STEP_MS', 500, { min: 1, max: 2000 }, 'the sandbox vendors\' time between one receipt and the next'),
});

export type ChannelsConfig = DeepReadonly<Static<typeof channelsConfigSchema>>;
