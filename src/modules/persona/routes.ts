/**
 * The persona routes (spec 03 part 4.1; paths per contract P1). Each declares
 * its access (the agent in the path with `agents:read`, `agents:write` or
 * `agents:manage`; the preset catalog for any credential) and its schemas;
 * the service does the work.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { grantedOf, markDeprecatedFields, type Access } from '../../api/kernel/access.js';
import { defineScopes } from '../../api/kernel/scopes.js';
import { NO_BODY } from '../../api/kernel/schema.js';
import type { PersonaVersion } from './repository.js';
import type { Actor, DraftAnswer, PersonaService } from './service.js';
import { agentNotFound } from './errors.js';
import {
  AgentParams, Answers, CreateVersionBody, DraftBody, EnhanceInstructionsBody, EnhanceStorytellingBody, EnhanceWebsiteBody,
  GenerateBody, PresetApplyBody, PresetParams, PublishBody, VersionParams, VersionsQuery,
} from './schemas.js';
import type { FastifyRequest } from 'fastify';

export const READ_SCOPE = 'agents:read';
export const WRITE_SCOPE = 'agents:write';
export const MANAGE_SCOPE = 'agents:manage';

defineScopes('persona', {
  [READ_SCOPE]: { description: 'read an agent\'s persona versions' },
  [WRITE_SCOPE]: { description: 'create, activate, generate, draft, publish, enhance and apply presets to an agent\'s persona' },
  [MANAGE_SCOPE]: { description: 'discard an agent\'s persona draft' },
});

export const AGENT_BASE = '/developer/agents/:agentId';
export const PRESETS_BASE = '/developer/agents/persona/presets';

const onAgent = (required: string): { access: Access; errorShape: 'persona' } => ({
  access: { resource: 'agent', scope: { required }, unseenByPerson: () => agentNotFound() },
  errorShape: 'persona',
});

const actorOf = (req: FastifyRequest): Actor => {
  const g = grantedOf(req);
  return { userId: g.principal.userId, orgId: g.orgId! };
};

const listed = (v: PersonaVersion, current: number | null) => ({
  version: v.version,
  createdDate: v.createdAt.getTime(),
  createdBy: v.createdBy,
  isCurrent: v.status === 'published' && v.version === current,
  versionStatus: v.status,
  persona: v.persona,
});

const draftBody = (a: DraftAnswer | { status: 'draft'; draft: PersonaVersion }) => ({
  status: a.status,
  message: a.status === 'draft' ? `Draft persona version ${a.draft.version} generated` : `A draft already exists: version ${a.draft.version}`,
  version: a.draft.version,
  versionStatus: a.draft.status,
  persona: a.draft.persona,
  config: a.draft.config,
});

export interface PersonaRouteDeps {
  service: PersonaService;
  deprecatedScopesSunset: Date;
}

/** The OpenAPI document's group for these routes. */
const tags = ['persona'];

export function registerPersonaRoutes(app: FastifyInstance, deps: PersonaRouteDeps): void {
  const { service } = deps;

  app.get<{ Params: AgentParams; Querystring: VersionsQuery }>(`${AGENT_BASE}/persona/versions`, {
    schema: { tags, summary: 'The agent\'s persona versions, newest first (status draft, published or all)', params: AgentParams, querystring: VersionsQuery, response: { 200: Answers.versions } },
    config: onAgent(READ_SCOPE),
  }, async (req) => {
    const { versions, current } = await service.listVersions(req.params.agentId, req.query.status ?? 'all');
    return { status: 'success', message: 'Persona versions retrieved', versions: versions.map((v) => listed(v, current)) };
  });

  app.get<{ Params: VersionParams }>(`${AGENT_BASE}/persona/version/:version`, {
    schema: { tags, summary: 'One persona version', params: VersionParams, response: { 200: Answers.version } },
    config: onAgent(READ_SCOPE),
  }, async (req) => {
    const { version: v, current } = await service.getVersion(req.params.agentId, req.params.version);
    return {
      status: 'success',
      message: `Persona version ${v.version} retrieved`,
      version: {
        ...listed(v, current), id: v.id, _id: v.id, __v: 0, agentId: v.agentId, config: v.config,
        createdAt: v.createdAt.toISOString(), agentVersion: v.agentVersion,
      },
    };
  });

  app.post<{ Params: AgentParams; Body: CreateVersionBody }>(`${AGENT_BASE}/persona/version`, {
    schema: { tags, summary: 'Create a persona version from a persona text or object; it becomes current', params: AgentParams, body: CreateVersionBody, response: { 201: Answers.versionNumber } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => {
    const v = await service.createVersion(actorOf(req), req.params.agentId, req.body.persona);
    return reply.status(201).send({ status: 'success', message: `Persona version ${v.version} created; it is served from the agent's next message`, version: v.version });
  });

  app.post<{ Params: VersionParams }>(`${AGENT_BASE}/persona/version/:version`, {
    schema: { tags, summary: 'Activate an earlier persona version', params: VersionParams, response: { 201: Answers.versionNumber } },
    config: { ...onAgent(WRITE_SCOPE), bodyUnchecked: NO_BODY },
  }, async (req, reply) => {
    const n = await service.activate(actorOf(req), req.params.agentId, req.params.version);
    return reply.status(201).send({ status: 'success', message: `Persona version ${n} is now current`, version: n });
  });

  app.post<{ Params: AgentParams; Body: GenerateBody }>(`${AGENT_BASE}/persona`, {
    schema: { tags, summary: 'Generate a persona from business facts and make it current', params: AgentParams, body: GenerateBody, response: { 201: Answers.generated } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => {
    deprecatedFields(reply, req.body, deps.deprecatedScopesSunset);
    const v = await service.generate(actorOf(req), req.params.agentId, req.body);
    return reply.status(201).send({ status: 'success', message: `Persona generated as version ${v.version}`, persona: v.persona, version: v.version });
  });

  app.post<{ Params: AgentParams; Body: DraftBody }>(`${AGENT_BASE}/persona/draft`, {
    schema: { tags, summary: 'Create the draft persona version from configuration fields', params: AgentParams, body: DraftBody, response: { 201: Answers.draft } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => {
    deprecatedFields(reply, req.body, deps.deprecatedScopesSunset);
    return reply.status(201).send(draftBody(await service.createDraft(actorOf(req), req.params.agentId, req.body)));
  });

  app.put<{ Params: AgentParams; Body: DraftBody }>(`${AGENT_BASE}/persona/draft`, {
    schema: { tags, summary: 'Regenerate the draft persona version', params: AgentParams, body: DraftBody, response: { 200: Answers.draft } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => {
    deprecatedFields(reply, req.body, deps.deprecatedScopesSunset);
    const draft = await service.regenerateDraft(actorOf(req), req.params.agentId, req.body);
    return { ...draftBody({ status: 'draft', draft }), message: `Draft persona version ${draft.version} regenerated` };
  });

  app.post<{ Params: AgentParams; Body: PublishBody }>(`${AGENT_BASE}/persona/publish`, {
    schema: { tags, summary: 'Publish an enhanced persona from instructions', params: AgentParams, body: PublishBody, response: { 201: Answers.published } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => {
    const v = await service.publish(actorOf(req), req.params.agentId, req.body.version);
    return reply.status(201).send({ status: 'success', message: `Draft version ${v.version} published and current`, version: v.version, persona: v.persona, versionStatus: v.status });
  });

  app.delete<{ Params: AgentParams }>(`${AGENT_BASE}/persona/draft`, {
    schema: { tags, summary: 'Discard the draft persona version (agents:manage)', params: AgentParams, response: { 200: Answers.message } },
    config: onAgent(MANAGE_SCOPE),
  }, async (req) => {
    const n = await service.discard(actorOf(req), req.params.agentId);
    return { status: 'success', message: `Draft version ${n} discarded` };
  });

  app.get(PRESETS_BASE, {
    schema: { tags, summary: 'The persona preset catalog', response: { 200: Answers.presets } },
    config: { access: { resource: 'authenticated' }, errorShape: 'persona' },
  }, async () => ({ status: 'success', presets: (await service.presets()).map(({ id, title, description }) => ({ id, title, description })) }));

  app.get<{ Params: PresetParams }>(`${PRESETS_BASE}/:presetId`, {
    schema: { tags, summary: 'One persona preset', params: PresetParams, response: { 200: Answers.preset } },
    config: { access: { resource: 'authenticated' }, errorShape: 'persona' },
  }, async (req) => ({ status: 'success', preset: await service.preset(req.params.presetId) }));

  app.post<{ Params: AgentParams; Body: PresetApplyBody }>(`${AGENT_BASE}/persona/preset/apply`, {
    schema: { tags, summary: 'Apply a preset to the agent\'s persona configuration', params: AgentParams, body: PresetApplyBody, response: { 201: Answers.config } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => {
    const config = await service.applyPreset(actorOf(req), req.params.agentId, req.body.presetId);
    return reply.status(201).send({ status: 'success', message: `Preset ${req.body.presetId} applied`, config });
  });

  app.post<{ Params: AgentParams; Body: EnhanceWebsiteBody }>(`${AGENT_BASE}/enhance/website`, {
    schema: { tags, summary: 'Suggest persona text from a website', params: AgentParams, body: EnhanceWebsiteBody, response: { 201: Answers.suggestion } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => reply.status(201).send(await service.enhance(req.params.agentId, { kind: 'website', ...req.body })));

  app.post<{ Params: AgentParams; Body: EnhanceStorytellingBody }>(`${AGENT_BASE}/enhance/storytelling`, {
    schema: { tags, summary: 'Suggest persona storytelling', params: AgentParams, body: EnhanceStorytellingBody, response: { 201: Answers.suggestion } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => reply.status(201).send(await service.enhance(req.params.agentId, { kind: 'storytelling', ...req.body })));

  app.post<{ Params: AgentParams; Body: EnhanceInstructionsBody }>(`${AGENT_BASE}/enhance/instructions`, {
    schema: { tags, summary: 'Suggest persona instructions', params: AgentParams, body: EnhanceInstructionsBody, response: { 201: Answers.suggestion } },
    config: onAgent(WRITE_SCOPE),
  }, async (req, reply) => reply.status(201).send(await service.enhance(req.params.agentId, { kind: 'instructions', ...req.body })));
}

/** The deprecated `brandPersonality` and `brandTraits` (spec 03 part 4.1) are still read; the answer says they are deprecated. */
function deprecatedFields(reply: FastifyReply, body: { brandPersonality?: string | undefined; brandTraits?: string | undefined }, sunset: Date): void {
  const sent = (['brandPersonality', 'brandTraits'] as const).filter((f) => body[f] !== undefined);
  if (sent.length > 0) markDeprecatedFields(reply, sunset, sent, 'personalityAndVoice');
}
