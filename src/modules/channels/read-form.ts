/** A delivery record as the routes answer it (spec 03 part 2.3, contract C4; schemas.ts DeliverySchema). */
import type { Delivery } from './model.js';

export type DeliveryReadForm = Record<string, unknown>;

export function deliveryReadForm(d: Delivery): DeliveryReadForm {
  return {
    id: d.id, agentId: d.agentId, channel: d.channel, channelIdentifier: d.channelIdentifier, from: d.from, to: d.to,
    userId: d.userId, address: d.address, provider: d.provider, origin: d.origin, status: d.status, failure: d.failure,
    history: d.history, messageId: d.messageId, template: d.template, idempotencyKey: d.idempotencyKey,
    ...(d.cost !== null ? { cost: d.cost } : {}), createdAt: d.createdAt.toISOString(), updatedAt: d.updatedAt.toISOString(),
  };
}
