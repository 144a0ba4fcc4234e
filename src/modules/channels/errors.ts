/** The channels family's error codes, defined once for the registry and docs/api.md. */
import { defineErrors } from '../../api/kernel/error-registry.js';
import type { AppError } from '../../errors.js';

export const ChannelErrors = defineErrors('channels', {
  CHANNEL_SEND_REFUSED: { status: 400, when: 'a channel send the recipient rules, the chat-app window, the reaction rules, the email body rules or the attachment limits refuse, or a bulk template trigger with a userId that has no chat-app conversation (framework shape: `{statusCode, error, message}`); nothing is sent or recorded' },
  DELIVERY_NOT_FOUND: { status: 404, when: '`GET .../channels/deliveries/:deliveryId` of a delivery that does not exist or belongs to another agent (framework shape)' },
});

export const refused = (message: string): AppError => ChannelErrors.CHANNEL_SEND_REFUSED(message);

export const deliveryNotFound = (deliveryId: string, agentId: string): AppError =>
  ChannelErrors.DELIVERY_NOT_FOUND(`No delivery ${deliveryId} for agent ${agentId}`);
