/**
 * Dispatch of a voice agent (spec 02 part 4.4; contract telephony T3.4, T4.4,
 * T6.4, T6.5): an outbound phone call, a meeting joined, or a web room,
 * through the voice calls port. Checked in this order: the body's fields, the
 * voice (named, or the agent's first active one), the caller id, then the
 * agent's dispatch budget (100 answered in the last 60 seconds, a sliding
 * window shared by every API process of the store: dispatch-ledger.ts), so
 * only a dispatch that is placed counts. Everything that can refuse a
 * dispatch comes before its place is reserved: a refused dispatch reaches
 * neither the budget nor the platform. Once the platform placed the call the
 * dispatch is answered with its session, whatever happens to the record: the
 * record holds only text checked storable before the call, and a store that
 * fails then costs the record (logged with the session), never the answer a
 * caller needs to not place the call twice.
 */
import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { RULE } from '../../../api/kernel/schema.js';
import { KernelErrors } from '../../../api/kernel/error-registry.js';
import { holdsText, LONE_SURROGATE } from '../../../model/record.js';
import type { DispatchTarget } from '../../../vendors/voice/port.js';
import type { AgentActor, TelephonyDeps } from '../context.js';
import { TelephonyErrors, fieldRules } from '../errors.js';
import { msisdnOf } from '../numbers/e164.js';
import { numbersRepo } from '../numbers/repository.js';
import { errors } from '../schemas.js';
import { voiceRepo, type VoiceRow } from './repository.js';
import { dispatchLedger } from './dispatch-ledger.js';
import { auditActorOf } from '../../../api/kernel/auth.js';

export const DISPATCH_LIMIT = { perMinute: 100 } as const;
export const CONTEXT_MAX_BYTES = 16 * 1024;
export const MEET_URL_MAX = 2048;
const CHANNELS = ['phone', 'meeting', 'chatapp', 'webchat', 'unknown'] as const;

const limitMessage = (agentId: string): string => `Voice dispatch rate limit exceeded for agent ${agentId} (${DISPATCH_LIMIT.perMinute}/min)`;

export const DispatchBody = Type.Object(
  {
    to: Type.Unknown({ description: 'Required. An E.164 string (a phone call), or `{kind: phone, number, callerId?}`, `{kind: meet, url}` (at most 2,048), `{kind: web, returnToken?: true}`' }),
    voice: Type.Optional(Type.String({ minLength: 1, maxLength: 64, [RULE]: 'voice must be a voice id or name of at most 64 characters' })),
    context: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { [RULE]: 'context must be an object', description: 'At most 16 KB serialized' })),
    threadId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, [RULE]: 'threadId must be a non-empty string of at most 100 characters' })),
    channel: Type.Optional(Type.Unsafe<(typeof CHANNELS)[number]>({ type: 'string', enum: [...CHANNELS], [RULE]: `channel must be one of ${CHANNELS.join(', ')}` })),
  },
  { additionalProperties: false, [RULE]: { type: 'body must be an object', additionalProperties: '{path} is not a known field' } },
);
export type DispatchBody = Static<typeof DispatchBody>;

export const dispatchSchema = {
  tags: ['telephony: voice'],
  summary: 'Place an outbound call, join a meeting or open a web room (telephony:provision; 100 a minute per agent)',
  params: Type.Object({ agentId: Type.String() }),
  body: DispatchBody,
  response: {
    201: Type.Object({ sessionId: Type.String(), roomName: Type.String(), callId: Type.Optional(Type.String()), joinUrl: Type.Optional(Type.String()) }),
    ...errors,
    429: errors[400],
  },
};

const TO_RULE = 'to must be an E.164 phone number or an object {kind: phone | meet | web}';
const isE164 = (v: unknown): v is string => typeof v === 'string' && v.startsWith('+') && msisdnOf(v) !== undefined;

/** The target of `to`, or the failed rules. */
function targetOf(to: unknown): DispatchTarget {
  if (to === undefined) throw fieldRules('to', ['to is required']);
  if (typeof to === 'string') {
    if (!isE164(to)) throw fieldRules('to', ['to must be an E.164 phone number (+ and digits)']);
    return { kind: 'phone', number: to };
  }
  if (typeof to !== 'object' || to === null || Array.isArray(to)) throw fieldRules('to', [TO_RULE]);
  const o = to as Record<string, unknown>;
  const only = (allowed: string[]) => Object.keys(o).filter((k) => !allowed.includes(k)).map((k) => `to.${k} is not a known field`);
  switch (o.kind) {
    case 'phone': {
      const rules = only(['kind', 'number', 'callerId']);
      if (!isE164(o.number)) rules.push('to.number must be an E.164 phone number (+ and digits)');
      if (o.callerId !== undefined && !isE164(o.callerId)) rules.push('to.callerId must be an E.164 phone number (+ and digits)');
      if (rules.length > 0) throw fieldRules('to', rules);
      return { kind: 'phone', number: o.number as string, callerId: o.callerId as string | undefined };
    }
    case 'meet': {
      const rules = only(['kind', 'url']);
      if (typeof o.url !== 'string' || o.url.length > MEET_URL_MAX || !URL.canParse(o.url)) rules.push(`to.url must be a URL of at most ${MEET_URL_MAX.toLocaleString('en-US')} characters`);
      if (rules.length > 0) throw fieldRules('to', rules);
      return { kind: 'meet', url: o.url as string };
    }
    case 'web': {
      const rules = only(['kind', 'returnToken']);
      if (o.returnToken !== undefined && o.returnToken !== true) rules.push('to.returnToken must be true when given');
      if (rules.length > 0) throw fieldRules('to', rules);
      return { kind: 'web' };
    }
    default:
      throw fieldRules('to', [TO_RULE]);
  }
}

/** NUL, and a UTF-16 surrogate without its pair: what Postgres text and JSON cannot hold. */
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`);

const CHANNEL_OF: Record<DispatchTarget['kind'], (typeof CHANNELS)[number]> = { phone: 'phone', meet: 'meeting', web: 'webchat' };

export function createDispatcher(deps: TelephonyDeps) {
  const { store, logger } = deps;
  const { voiceCalls } = deps.vendors;
  const repo = voiceRepo(store.sql);
  const ledger = dispatchLedger(store.sql, DISPATCH_LIMIT.perMinute);

  /** The voice `ref` names (id, else name), active and the agent's; or the agent's first active voice. */
  async function voiceFor(agentId: string, ref: string | undefined): Promise<VoiceRow> {
    const voices = await repo.list(agentId);
    if (ref === undefined) {
      const first = voices.find((v) => v.active);
      if (!first) throw TelephonyErrors.VOICE_NONE_ACTIVE(`Agent ${agentId} has no active LuaVoice configured. Push a voice before dispatching.`);
      return first;
    }
    const named = voices.find((v) => v.id === ref && v.active) ?? voices.find((v) => v.name === ref && v.active);
    if (!named) throw TelephonyErrors.VOICE_NOT_USABLE(`Voice "${ref}" not active on agent ${agentId} (deactivated, missing, or owned by a different agent).`);
    return named;
  }

  return {
    async dispatch(actor: AgentActor, body: DispatchBody, reply: FastifyReply) {
      const target = targetOf(body.to);
      if (body.context !== undefined && Buffer.byteLength(JSON.stringify(body.context), 'utf8') > CONTEXT_MAX_BYTES) {
        throw fieldRules('context', ['context must be at most 16 KB serialized']);
      }
      // The record carries threadId: text the store refuses would fail it after the call was placed.
      if (body.threadId !== undefined && holdsText(body.threadId, UNSTORABLE)) {
        throw fieldRules('threadId', ['threadId must not contain NUL characters or unpaired surrogates']);
      }
      const voice = await voiceFor(actor.agentId, body.voice);
      if (target.kind === 'phone' && target.callerId !== undefined) {
        const digits = target.callerId.slice(1);
        if (!(await numbersRepo(store.sql).ownsActive(actor.orgId, digits))) throw TelephonyErrors.CALLER_ID_NOT_AUTHORIZED('Caller ID is not authorized for this agent.');
      }
      const place = await ledger.reserve(actor.agentId);
      if ('retryAfterSeconds' in place) {
        deps.metrics.telephonyDispatch(target.kind, 'rate_limited');
        reply.header('Retry-After', String(place.retryAfterSeconds));
        throw KernelErrors.RATE_LIMITED(limitMessage(actor.agentId), { retryAfterSeconds: place.retryAfterSeconds });
      }
      const sessionId = randomUUID();
      const roomName = `svc-voice-${sessionId}`;
      let placed;
      try {
        placed = await voiceCalls.dispatch({ sessionId, roomName, agentId: actor.agentId, voiceId: voice.id, target });
      } catch (e) {
        deps.metrics.telephonyDispatch(target.kind, 'vendor_failed');
        // Not placed: the place goes back. Should the store fail here too, the place only counts until it leaves the window.
        await ledger.release(place.placeId).catch((r: unknown) => logger.warn({ event: 'telephony.voice.dispatch_place_kept', agentId: actor.agentId, err: { message: (r as Error).message } }, 'dispatch place not given back'));
        throw e;
      }
      deps.metrics.telephonyDispatch(target.kind, 'placed');
      const threadId = body.threadId ?? `voice:${sessionId}`;
      const channel = body.channel ?? CHANNEL_OF[target.kind];
      const details = { agentId: actor.agentId, sessionId, roomName, kind: target.kind, channel, threadId, ...(placed.callId !== undefined ? { callId: placed.callId } : {}) };
      try {
        await store.unitOfWork(async (tx) => {
          await dispatchLedger(tx.sql, DISPATCH_LIMIT.perMinute).answered(place.placeId);
          await tx.audit({
            orgId: actor.orgId, action: 'telephony.voice.dispatched', actor: auditActorOf(actor.principal), targetType: 'voice', targetId: voice.id, details,
          });
        });
      } catch (e) {
        // The call is placed: its place stays reserved (it counts until it leaves the window) and the caller gets its session.
        logger.error({ event: 'telephony.voice.dispatch_unrecorded', orgId: actor.orgId, voiceId: voice.id, ...details, err: { message: (e as Error).message } }, 'voice dispatch placed but not recorded');
      }
      if (target.kind === 'web') return { sessionId, roomName, joinUrl: placed.joinUrl! };
      return { sessionId, roomName, ...(placed.callId !== undefined ? { callId: placed.callId } : {}) };
    },
  };
}
