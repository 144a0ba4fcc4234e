/**
 * The deploy routes' own error codes (the family's others are in errors.ts), answered in the
 * templates envelope `{code, message, ...fields}`.
 */
import { defineErrors } from '../../api/kernel/error-registry.js';

export const DeployErrors = defineErrors('templates', {
  DEPLOY_FAILED: { status: 500, when: 'templates: a deploy whose install failed past the deploy job\'s attempts for a reason other than a refusal; the poll route\'s `error`, and the answer of a request still waiting for it; the minted agent is left as it is' },
  TEMPLATE_DEPLOY_NOT_FOUND: { status: 404, when: 'templates: GET `deploys/:deployId` of an unknown deploy, or of one of an organization the caller cannot read; templates envelope' },
});
