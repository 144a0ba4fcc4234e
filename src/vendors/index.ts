/**
 * The vendor adapters a deployment uses, chosen here from configuration and
 * nowhere else: the sandboxes by default, SMTP for mail when EMAIL_SMTP_URL is set,
 * the carrier named by TELEPHONY_CARRIER, an OpenAI-compatible model provider when
 * MODEL_PROVIDER_URL (with its key and model) is set, the sandbox RCS platform and voice calls, a LiveKit server for voice
 * sessions when VOICE_MEDIA_URL (with its key and secret) is set.
 */
import type { Config } from '../config/config.js';
import type { MessagingPort } from './messaging/port.js';
import type { MailPort } from './mail/port.js';
import type { Carrier } from './carrier/port.js';
import { selectCarrier } from './carrier/select.js';
import { createSandboxMessaging } from './messaging/sandbox.js';
import { createSandboxMail } from './mail/sandbox.js';
import { createSmtpMail } from './mail/smtp.js';
import type { ModelProvider } from './model-provider/port.js';
import { createModelProvider } from './model-provider/index.js';
import type { RcsPort } from './rcs/port.js';
import { createSandboxRcs } from './rcs/sandbox.js';
import type { VoiceCallsPort } from './voice/port.js';
import { createSandboxVoiceCalls } from './voice/sandbox.js';
import type { MediaRoomsPort } from './media/port.js';
import { createSandboxMedia } from './media/sandbox.js';
import { createLiveKitMedia } from './media/livekit.js';

export interface Vendors {
  messaging: MessagingPort;
  mail: MailPort;
  carrier: Carrier;
  modelProvider: ModelProvider;
  rcs: RcsPort;
  voiceCalls: VoiceCallsPort;
  media: MediaRoomsPort;
}

export function createVendors(config: Config): Vendors {
  const c = config.channels;
  return {
    messaging: createSandboxMessaging({ stepMs: c.sandboxReceiptStepMs }),
    mail: c.smtpUrl !== undefined ? createSmtpMail({ url: c.smtpUrl, from: c.emailFrom }) : createSandboxMail(),
    carrier: selectCarrier(config),
    modelProvider: createModelProvider(config),
    rcs: createSandboxRcs(),
    voiceCalls: createSandboxVoiceCalls(),
    media: config.voiceMedia !== undefined
      ? createLiveKitMedia(config.voiceMedia, { timeoutMs: config.voiceMediaTimeoutMs, extraCaCerts: config.extraCaCerts })
      : createSandboxMedia(),
  };
}
