/**
 * The deploy routes' own error codes (the family's others are in errors.ts), answered in the
 * templates envelope `{code, message, ...fields}`.
 */
import { defineErrors } from '../../api/kernel/error-registry.js';

export const DeployErrors = defineErrors('templates', {
  TEMPLATE_DEPLOY_NOT_FOUND: { status: 404, when: 'templates: GET `deploys/:deployId` of an unknown deploy, or of one of an organization the caller cannot read; templates envelope' },
});
