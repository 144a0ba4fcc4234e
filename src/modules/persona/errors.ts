/**
 * The persona family's error codes (spec 03 part 7, persona table), defined
 * once for the registry and docs/api.md. The not-found answers carry the
 * spec's messages word for word in the framework shape, without a `code`
 * (kernel/error-shapes.ts, `persona`).
 */
import type { AppError } from '../../errors.js';
import { defineErrors } from '../../api/kernel/error-registry.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import type { ModelProviderError } from '../../vendors/model-provider/port.js';

export const PersonaErrors = defineErrors('persona', {
  PERSONA_AGENT_NOT_FOUND: { status: 404, codeless: true, when: '`SubAgent not found`: a session or legacy key on an agent that does not exist or is of an organization the user is not a member of (a scoped key gets `RESOURCE_NOT_PROJECTED`)' },
  PERSONA_VERSION_NOT_FOUND: { status: 404, codeless: true, when: '`Persona version <n> not found for agent <id>`: no such persona version' },
  PERSONA_DRAFT_NOT_FOUND: { status: 404, codeless: true, when: '`Draft version <n> not found for agent <id>`: publishing a version that is not the draft; `No draft found for agent <id>`: regenerating or discarding without a draft' },
  PERSONA_PRESET_NOT_FOUND: { status: 404, codeless: true, when: '`Preset with ID <id> not found`: no such persona preset' },
  PERSONA_VERSION_IS_DRAFT: { status: 409, codeless: true, when: 'activating a persona version that is the draft (publish it instead)' },
  PROVIDER_REJECTED: { status: 424, fields: ['providerStatus', 'reason', 'keyOwner', 'transient'], when: 'the model provider refused the request (a refusal, a refused key or model, an exhausted quota); nothing was stored' },
  PROVIDER_ANSWER_INVALID: { status: 502, when: 'the model provider\'s answer could not be used (not the JSON asked for, cut off at the output bound); nothing was stored' },
  WEBSITE_NOT_FETCHABLE: { status: 422, fields: ['field'], when: '`enhance/website` with a real model provider: the page is not public HTTPS, a redirect led elsewhere, or it did not answer in time' },
});

export const agentNotFound = (): AppError => PersonaErrors.PERSONA_AGENT_NOT_FOUND('SubAgent not found');
export const versionNotFound = (n: number, agentId: string): AppError => PersonaErrors.PERSONA_VERSION_NOT_FOUND(`Persona version ${n} not found for agent ${agentId}`);
export const draftVersionNotFound = (n: number, agentId: string): AppError => PersonaErrors.PERSONA_DRAFT_NOT_FOUND(`Draft version ${n} not found for agent ${agentId}`);
export const noDraft = (agentId: string): AppError => PersonaErrors.PERSONA_DRAFT_NOT_FOUND(`No draft found for agent ${agentId}`);
export const presetNotFound = (id: string): AppError => PersonaErrors.PERSONA_PRESET_NOT_FOUND(`Preset with ID ${id} not found`);

/** How long a client should wait before retrying a provider that did not answer. */
export const PROVIDER_RETRY_AFTER_SECONDS = 30;

/** A model provider's failure as the route answers it (spec 01 part 7.1 item 4 and part 7.2). */
export function providerFailure(e: ModelProviderError): AppError {
  switch (e.kind) {
    case 'rejected':
      return PersonaErrors.PROVIDER_REJECTED(e.message, { providerStatus: e.providerStatus, reason: e.reason, keyOwner: 'platform', transient: false });
    case 'unavailable':
      return KernelErrors.VENDOR_UNAVAILABLE(e.message, { vendor: 'model-provider', retryAfterSeconds: PROVIDER_RETRY_AFTER_SECONDS });
    case 'malformed':
      return PersonaErrors.PROVIDER_ANSWER_INVALID(e.message);
  }
}
