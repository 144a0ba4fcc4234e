/**
 * The install routes' own error codes (spec 03 part 7 leaves the full list open), in the templates
 * envelope like the family's others (errors.ts).
 */
import { defineErrors } from '../../api/kernel/error-registry.js';
import type { AppError } from '../../errors.js';

export const InstallErrors = defineErrors('templates', {
  TEMPLATE_INSTALL_NOT_FOUND: { status: 404, when: 'templates: an install route (update-preview, PATCH, setup retry, removal-preview, DELETE) for a template not installed on the agent; templates envelope' },
  TEMPLATE_APPLY_FAILED: { status: 409, fields: ['reason', 'key'], when: 'templates: a first install whose marketplace skill (`key`) the skills family refuses (`reason` its code); nothing is installed; templates envelope' },
});

export const installNotFound = (templateId: string, agentId: string): AppError =>
  InstallErrors.TEMPLATE_INSTALL_NOT_FOUND(`Template ${templateId} is not installed on agent ${agentId}`);
