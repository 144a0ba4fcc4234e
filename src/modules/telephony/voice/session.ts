/**
 * Voice sessions for a custom front end (spec 02 part 4.4; contract telephony
 * T7): a media room and a client token for it, through the media-room port
 * (a LiveKit server when VOICE_MEDIA_* is set, else the in-process sandbox).
 * The upstream call is bounded (15 s): no answer in time, a transport failure
 * or a 5xx is `503 UPSTREAM_UNAVAILABLE`; a 4xx passes through.
 */
import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../errors.js';
import { RULE } from '../../../api/kernel/schema.js';
import { KernelErrors } from '../../../api/kernel/error-registry.js';
import { MediaRejected, MediaUnavailable } from '../../../vendors/media/port.js';
import type { AgentActor, TelephonyDeps } from '../context.js';
import { TelephonyErrors, voiceNotFound } from '../errors.js';
import { errors } from '../schemas.js';
import { voiceRepo } from './repository.js';

/** Seconds a client is told to wait before retrying after the media server failed. */
export const SESSION_RETRY_AFTER_SECONDS = 5;

const text = (field: string, max: number) => Type.String({ minLength: 1, maxLength: max, [RULE]: `${field} must be a non-empty string of at most ${max} characters` });

export const SessionBody = Type.Object(
  {
    channel: Type.Optional(Type.String({ maxLength: 64, [RULE]: 'channel must be a string', description: '`web`, the default and only accepted value' })),
    userId: Type.Optional(text('userId', 128)),
    voiceId: Type.Optional(text('voiceId', 128)),
    displayName: Type.Optional(text('displayName', 128)),
  },
  { additionalProperties: false, [RULE]: { type: 'body must be an object', additionalProperties: '{path} is not a known field' } },
);
export type SessionBody = Static<typeof SessionBody>;

export const sessionSchema = {
  tags: ['telephony: voice'],
  summary: 'Create a media room and a client token for it (a LiveKit server, or the sandbox)',
  params: Type.Object({ agentId: Type.String() }),
  body: SessionBody,
  response: {
    201: Type.Object({ url: Type.String(), roomName: Type.String(), token: Type.String({ description: 'A LiveKit access token (JWT)' }), participantIdentity: Type.String(), agentName: Type.String() }),
    ...errors,
    503: errors[400],
  },
};

export function createSessions(deps: TelephonyDeps) {
  const { store } = deps;
  const { media } = deps.vendors;
  return {
    async open(actor: AgentActor, body: SessionBody, req: FastifyRequest) {
      if ((body.channel ?? 'web') !== 'web') throw TelephonyErrors.VOICE_SESSION_CHANNEL("channel must be 'web' for developer voice sessions");
      if (body.voiceId !== undefined && !(await voiceRepo(store.sql).get(actor.agentId, body.voiceId))) throw voiceNotFound();
      const agent = await store.auth.agent(actor.agentId);
      const sessionId = randomUUID();
      const roomName = `svc-voice-${sessionId}`;
      const participantIdentity = body.userId ?? `web-${randomUUID()}`;
      try {
        const s = await media.openSession(roomName, participantIdentity, body.displayName);
        deps.metrics.voiceSessionCreated();
        return { url: s.url, roomName: s.roomName, token: s.token, participantIdentity, agentName: agent?.name ?? actor.agentId };
      } catch (e) {
        // The media server's own status, passed through (MEDIA_UPSTREAM_REJECTED is registered with 400 standing for any 4xx).
        if (e instanceof MediaRejected) throw new AppError(e.status, 'MEDIA_UPSTREAM_REJECTED', e.message);
        if (e instanceof MediaUnavailable) {
          req.log.warn({ event: 'voice_session_upstream_unavailable', reason: e.message }, 'voice session: media server unavailable');
          throw KernelErrors.UPSTREAM_UNAVAILABLE('UPSTREAM_UNAVAILABLE', { requestId: String(req.id), retryAfterSeconds: SESSION_RETRY_AFTER_SECONDS });
        }
        throw e;
      }
    },
  };
}
