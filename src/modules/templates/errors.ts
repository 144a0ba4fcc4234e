/**
 * The agent templates' error codes (spec 03 part 7; contract templates),
 * defined once for the registry and docs/api.md. Template routes answer in
 * the templates envelope (kernel/error-shapes.ts `templates`):
 * `{code, message, ...fields}`, with the envelope's optional fields
 * (`capabilityKey`, `field`, `allowedValues`, `primitives`, `reason`,
 * `missingScopes`, `key`, `blockedTriggers`, `jobs`, `sourceAgentId`, `kind`,
 * `items`, `issues`, `reconciliation`) only where a code carries them. A
 * request that breaks a route's schema answers 400 in the framework shape,
 * spec 01's access denials keep spec 01's shape, and the catalog's 429 is
 * plain `{statusCode, message}`.
 */
import type { AppError } from '../../errors.js';
import { defineErrors, KernelErrors } from '../../api/kernel/error-registry.js';

export const TemplateErrors = defineErrors('templates', {
  TEMPLATE_NOT_FOUND: { status: 404, when: 'templates: an unknown template, or one the caller may not see (another organization\'s private one), on every template route; templates envelope' },
  TEMPLATE_VERSION_NOT_FOUND: { status: 404, fields: ['version'], when: 'templates: a version number the template does not have; templates envelope' },
  SOURCE_AGENT_VERSION_NOT_FOUND: { status: 404, fields: ['sourceAgentId', 'version'], when: 'templates: a `sourceAgentVersion` other than the source agent\'s active version (the only one the platform keeps), or one given for a template without a source agent; templates envelope' },
  TEMPLATE_ORG_NOT_FOUND: { status: 404, when: 'templates: an ownership transfer to an organization that does not exist; templates envelope' },
  TEMPLATE_NO_VERSION: { status: 404, when: 'templates: the latest manifest, an install or a deploy of a template that has no version yet; templates envelope' },
  CONTENT_HASH_MISMATCH: { status: 409, fields: ['reason'], when: 'templates: an install or deploy whose `contentHash` is not the seal of the version being installed (the template changed since its manifest was read); templates envelope' },
  TEMPLATE_NOT_DEPLOYABLE: { status: 409, fields: ['sourceAgentId'], when: 'templates: a deploy of a template whose source is not a base agent (`sourceBaseAgentId` absent); templates envelope' },
  TEMPLATE_VERSION_DEPRECATED: { status: 409, fields: ['reason'], when: 'templates: a new install or deploy of a deprecated version; templates envelope' },
  INSTALL_POLICY_SINGLE: { status: 409, when: 'templates: a second install of a template whose version says `installPolicy.perWorkspace: single` on another agent of the same organization; templates envelope' },
  MODIFIED_SINCE_INSTALL: { status: 409, fields: ['primitives'], when: 'templates: an install or re-install that would write again a primitive the agent changed since the template applied it (the persona, `persona/<agentId>`), not named in `acceptModifiedPrimitives`; an auto-apply skips such an install with this code in `lastError`; templates envelope' },
  'agent-not-template-minted': { status: 409, when: 'templates: an uninstall with `removeAgent=true` of an agent the template did not create through deploy; templates envelope' },
  TEMPLATE_CATALOG_RATE_LIMITED: { status: 429, plain: true, when: 'templates: a client address past the catalog\'s budget (60 list reads, 20 detail, version and manifest reads a minute); plain body `{statusCode: 429, message}` with `Retry-After`' },
});

export const templateNotFound = (id: string): AppError => TemplateErrors.TEMPLATE_NOT_FOUND(`Template ${id} not found`);
export const versionNotFound = (id: string, version: number): AppError =>
  TemplateErrors.TEMPLATE_VERSION_NOT_FOUND(`Version ${version} not found for template ${id}`, { version });
export const noVersion = (id: string): AppError => TemplateErrors.TEMPLATE_NO_VERSION(`Template ${id} has no version yet`);

/** A `required` variable of the version's `envContract` without a value (contract templates, env contract): the code skills share. */
export const envValueRequired = (key: string): AppError =>
  KernelErrors.ENV_VALUE_REQUIRED(`The template version requires a value for ${key} in envValues`, { key });
