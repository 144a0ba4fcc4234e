/** The channel routes of spec 03 part 4.2 (the bulk template trigger among them) and the vendors' receipt route. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantedOf } from '../../api/kernel/access.js';
import { answerBytes } from '../../api/kernel/read-cache.js';
import { keyedByHeader, keyedInBody } from '../../api/kernel/store-outage.js';
import { CHANNELS_BASE, RECEIPTS_PATH, receiptsAccess, sendAccess, TRIGGER_PATH } from './context.js';
import { deliveryNotFound } from './errors.js';
import { deliveryReadForm } from './read-form.js';
import type { ChannelService, SendContext } from './service.js';
import {
  AgentParams, DeliveriesQuery, DeliveryParams, DeliverySchema, EmailBody, errorResponses, ReactionBody, ReceiptBody, ReceiptResult,
  SendBody, SendHeaders, SendResultSchema, TemplateBody, TriggerBody, TriggerParams, TriggerResultSchema,
  type DeliveriesQueryT, type EmailBodyT, type ReactionBodyT, type ReceiptBodyT, type SendBodyT, type TemplateBodyT, type TriggerBodyT, type TriggerParamsT,
} from './schemas.js';
import { Type } from '@sinclair/typebox';
import type { VendorFailure } from '../../vendors/messaging/port.js';
import { auditActorOf } from '../../api/kernel/auth.js';

const config = { access: sendAccess, errorShape: 'framework' as const };
/** A send is safe to repeat after a store outage with its X-Idempotency-Key (kernel/store-outage.ts). */
const sendConfig = { ...config, blindRetry: keyedByHeader('x-idempotency-key') };
const sendSchema = (summary: string, body: object) => ({
  tags: ['channels'], summary, params: AgentParams, headers: SendHeaders, body, response: { 200: SendResultSchema, ...errorResponses },
});

function contextOf(req: FastifyRequest): SendContext {
  const { orgId, agentId, principal } = grantedOf(req);
  const key = req.headers['x-idempotency-key'];
  return { orgId: orgId!, agentId: agentId!, idempotencyKey: typeof key === 'string' ? key : undefined, actor: auditActorOf(principal) };
}

export function registerChannelRoutes(app: FastifyInstance, service: ChannelService): void {
  app.post<{ Params: { agentId: string }; Body: SendBodyT }>(`${CHANNELS_BASE}/send`, { schema: sendSchema('Send text on a channel', SendBody), config: sendConfig }, async (req) =>
    service.send(contextOf(req), req.body),
  );
  app.post<{ Params: { agentId: string }; Body: TemplateBodyT }>(`${CHANNELS_BASE}/chatapp/template`, { schema: sendSchema('Send a chat-app template (opens a conversation outside the window)', TemplateBody), config: sendConfig }, async (req) =>
    service.sendTemplate(contextOf(req), req.body),
  );
  app.post<{ Params: { agentId: string }; Body: ReactionBodyT }>(`${CHANNELS_BASE}/chatapp/reaction`, { schema: sendSchema('React to a chat-app message', ReactionBody), config: sendConfig }, async (req) =>
    service.sendReaction(contextOf(req), req.body),
  );
  app.post<{ Params: { agentId: string }; Body: EmailBodyT }>(`${CHANNELS_BASE}/email/send`, { schema: sendSchema('Send an email', EmailBody), config: sendConfig }, async (req) =>
    service.sendEmail(contextOf(req), req.body),
  );

  app.post<{ Params: TriggerParamsT; Body: TriggerBodyT }>(TRIGGER_PATH, {
    schema: {
      tags: ['channels'], summary: 'Send a chat-app template to 1-1000 recipients (one delivery record each, origin template)',
      params: TriggerParams, body: TriggerBody, response: { 200: TriggerResultSchema, ...errorResponses },
    },
    config,
  }, async (req) => {
    const { orgId, agentId, principal } = grantedOf(req);
    return service.triggerTemplate({ orgId: orgId!, agentId: agentId!, idempotencyKey: undefined, actor: auditActorOf(principal) }, {
      userId: principal.userId, channelId: req.params.channelId, templateId: req.params.templateId, recipients: req.body.recipients,
    });
  });

  app.get<{ Params: { agentId: string }; Querystring: DeliveriesQueryT }>(`${CHANNELS_BASE}/deliveries`, {
    schema: {
      tags: ['channels'], summary: 'Delivery records of the agent, newest first', params: AgentParams, querystring: DeliveriesQuery,
      response: { 200: Type.Object({ success: Type.Literal(true), data: Type.Array(DeliverySchema) }, { additionalProperties: false }), ...errorResponses },
    },
    config,
  }, async (req, reply) => {
    const { agentId } = grantedOf(req);
    const q = req.query;
    // The answer's bytes come from this route's own serializer (its response schema), made once per
    // read of the store: a cached answer is sent as it was serialized.
    const body = await service.deliveriesAnswer(agentId!, {
      userId: q.userId, status: q.status, channel: q.channel, since: q.since === undefined ? undefined : new Date(q.since), limit: q.limit ?? 50,
    }, (data) => answerBytes(reply.serialize({ success: true, data })));
    return reply.type('application/json; charset=utf-8').send(body);
  });

  app.get<{ Params: { agentId: string; deliveryId: string } }>(`${CHANNELS_BASE}/deliveries/:deliveryId`, {
    schema: {
      tags: ['channels'], summary: 'One delivery record', params: DeliveryParams,
      response: { 200: Type.Object({ success: Type.Literal(true), data: DeliverySchema }, { additionalProperties: false }), ...errorResponses },
    },
    config,
  }, async (req) => {
    const { agentId } = grantedOf(req);
    const d = await service.repo.getDelivery(agentId!, req.params.deliveryId);
    if (!d) throw deliveryNotFound(req.params.deliveryId, req.params.agentId);
    return { success: true as const, data: deliveryReadForm(d) };
  });

  // A vendor's callbacks: status receipts and end users' messages, once per vendor event id.
  app.post<{ Body: ReceiptBodyT }>(RECEIPTS_PATH, {
    schema: { tags: ['channels'], summary: "A messaging or mail vendor's callback (status receipt or inbound message)", body: ReceiptBody, response: { 200: ReceiptResult, ...errorResponses } },
    // A vendor's callback is applied once per (provider, eventId): its event id is its idempotency key.
    config: { access: receiptsAccess, errorShape: 'framework' as const, blindRetry: keyedInBody((body) => typeof (body as { eventId?: unknown }).eventId === 'string') },
  }, async (req) => {
    const { orgId } = grantedOf(req);
    const b = req.body;
    if (b.type === 'status') {
      const at = service.receiptTime('at', b.at);
      const r = await service.applyReceipt({
        provider: b.provider, eventId: b.eventId, messageId: b.messageId, status: b.status, at,
        ...(b.failure ? { failure: { code: b.failure.code ?? null, title: b.failure.title, detail: b.failure.detail ?? null, href: b.failure.href ?? null, retryable: b.failure.retryable, owner: b.failure.owner, category: b.failure.category as VendorFailure['category'] } } : {}),
      }, orgId);
      return { eventId: b.eventId, ...r, flushed: [] };
    }
    const receivedAt = service.receiptTime('receivedAt', b.receivedAt);
    return { eventId: b.eventId, ...(await service.recordInboundEvent(orgId!, { ...b, receivedAt })) };
  });
}
