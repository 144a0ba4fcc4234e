/**
 * The voice routes (spec 02 part 4.4) under /developer/voice-agents/:agentId:
 * the scope is checked on the agent in the path (contract telephony T2); a
 * person is answered `404 Agent not found` for an agent it cannot see.
 */
import type { FastifyInstance } from 'fastify';
import { NO_BODY } from '../../../api/kernel/schema.js';
import { answerBytes } from '../../../api/kernel/read-cache.js';
import { SCOPES, agentAccess, agentActorOf, routeConfig, type TelephonyDeps } from '../context.js';
import { TelephonyErrors, agentNotFound } from '../errors.js';
import { VERSION_BODY_LIMIT, schemas, type CreateBody, type ProvisionBody, type UpdateBody, type VersionBody } from './schemas.js';
import { createVoiceService } from './service.js';
import { createDispatcher, dispatchSchema, type DispatchBody } from './dispatch.js';
import { createSessions, sessionSchema, type SessionBody } from './session.js';

export const VOICE_BASE = '/developer/voice-agents/:agentId';

type AgentParams = { agentId: string };
type VoiceParams = { agentId: string; voiceId: string };

export function registerVoiceRoutes(app: FastifyInstance, deps: TelephonyDeps): void {
  const voices = createVoiceService(deps);
  const dispatcher = createDispatcher(deps);
  const sessions = createSessions(deps);
  const on = (scope: string) => routeConfig(agentAccess(scope, agentNotFound));
  const item = `${VOICE_BASE}/:voiceId`;

  // The answer's bytes come from this route's own serializer (its response schema), made once per read of the store.
  app.get<{ Params: AgentParams }>(VOICE_BASE, { schema: schemas.list, config: on(SCOPES.read) }, async (req, reply) => {
    const body = await voices.listAnswer(agentActorOf(req).agentId, (list) => answerBytes(reply.serialize({ voices: list })));
    return reply.type('application/json; charset=utf-8').send(body);
  });

  app.post<{ Params: AgentParams; Body: CreateBody }>(VOICE_BASE, { schema: schemas.create, config: on(SCOPES.write) }, async (req, reply) => {
    return reply.status(201).send(await voices.create(agentActorOf(req), req.body.name, req.body.description));
  });

  app.post<{ Params: AgentParams; Body: ProvisionBody }>(`${VOICE_BASE}/provision-from-config`, {
    schema: schemas.provision,
    bodyLimit: VERSION_BODY_LIMIT,
    config: {
      ...on(SCOPES.write),
      // A schema failure here is spec 02 part 7's `Invalid voice config: ...`.
      validationError: (issues) => TelephonyErrors.VOICE_CONFIG_INVALID(`Invalid voice config: ${issues.map((i) => i.message).join('; ')}`),
    },
  }, async (req, reply) => reply.status(201).send(await voices.provision(agentActorOf(req), req.body)));

  app.post<{ Params: AgentParams; Body: DispatchBody }>(`${VOICE_BASE}/dispatch`, { schema: dispatchSchema, config: on(SCOPES.provision) }, async (req, reply) => {
    return reply.status(201).send(await dispatcher.dispatch(agentActorOf(req), req.body, reply));
  });

  app.post<{ Params: AgentParams; Body: SessionBody }>('/developer/voice/:agentId/session', {
    schema: sessionSchema,
    config: on(SCOPES.write),
    // Every field is optional: a request without a body asks for the defaults.
    preValidation: async (req) => {
      req.body ??= {};
    },
  }, async (req, reply) => {
    return reply.status(201).send(await sessions.open(agentActorOf(req), req.body ?? {}, req));
  });

  app.post<{ Params: VoiceParams; Body: VersionBody }>(`${item}/version`, { schema: schemas.pushVersion, bodyLimit: VERSION_BODY_LIMIT, config: on(SCOPES.write) }, async (req, reply) => {
    return reply.status(201).send(await voices.pushVersion(agentActorOf(req), req.params.voiceId, req.body));
  });

  app.get<{ Params: VoiceParams }>(`${item}/versions`, { schema: schemas.versions, config: on(SCOPES.read) }, async (req) => voices.versions(agentActorOf(req).agentId, req.params.voiceId));

  app.put<{ Params: VoiceParams & { version: string } }>(`${item}/:version/publish`, { schema: schemas.publish, config: { ...on(SCOPES.write), bodyUnchecked: NO_BODY } }, async (req) => {
    return voices.publish(agentActorOf(req), req.params.voiceId, req.params.version);
  });

  app.put<{ Params: VoiceParams; Body: UpdateBody }>(item, { schema: schemas.update, config: on(SCOPES.write) }, async (req) => voices.update(agentActorOf(req), req.params.voiceId, req.body ?? {}));

  app.delete<{ Params: VoiceParams }>(item, { schema: schemas.deactivate, config: on(SCOPES.manage) }, async (req) => voices.deactivate(agentActorOf(req), req.params.voiceId));
}
