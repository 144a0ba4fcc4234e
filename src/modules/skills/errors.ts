/**
 * The marketplace skills' error codes (contract skills, "errors"; spec 03
 * part 7 shows no table), defined once for the registry and docs/api.md.
 * Routes answer in the framework shape (kernel/error-shapes.ts `framework`):
 * a 400 or 404 is `{statusCode, error, message}` without its code, a 409
 * keeps spec 01 part 7.1's shape with `code`.
 */
import type { AppError } from '../../errors.js';
import { defineErrors, KernelErrors } from '../../api/kernel/error-registry.js';

export const SkillErrors = defineErrors('skills', {
  SKILL_NOT_FOUND: { status: 404, when: 'skills: `Marketplace skill <id> not found`, an unknown skill or one the caller cannot see (another organization\'s private skill); framework shape' },
  SOURCE_SKILL_NOT_FOUND: { status: 404, when: 'skills: `Skill <id> not found`, listing a source skill that does not exist or belongs to an organization the caller is not of; framework shape' },
  SKILL_VERSION_NOT_FOUND: { status: 404, when: 'skills: a version id, or a version string (unpublish, install), the skill does not have; framework shape' },
  SKILL_NOT_INSTALLED: { status: 404, when: 'skills: updating or removing an install of a skill that is not installed on the agent; framework shape' },
  SKILL_ORG_NOT_FOUND: { status: 404, when: 'skills: an ownership transfer to an organization that does not exist; framework shape' },
  SKILL_VERSION_INVALID: { status: 400, when: 'skills: a version that is not a semantic version (`1.0.0`, `2.1.0-beta.1`); framework shape' },
  SKILL_VERSION_EXISTS: { status: 409, fields: ['version'], when: 'skills: publishing a version string the skill has already' },
  SKILL_ALREADY_LISTED: { status: 409, fields: ['skillId'], when: 'skills: listing a source skill that is listed already (`skillId` names the marketplace skill)' },
  SKILL_VERSION_NOT_PUBLISHED: { status: 409, fields: ['version'], when: 'skills: installing (or moving an install to) a version that is not published, or installing a skill with no published version; unpublishing a version that is not published' },
  SKILL_ALREADY_INSTALLED: { status: 409, fields: ['agentId'], when: 'skills: installing a skill the agent has installed already (PUT updates an install)' },
});

export const skillNotFound = (id: string): AppError => SkillErrors.SKILL_NOT_FOUND(`Marketplace skill ${id} not found`);
export const sourceSkillNotFound = (id: string): AppError => SkillErrors.SOURCE_SKILL_NOT_FOUND(`Skill ${id} not found`);
export const versionNotFound = (skillId: string, version: string): AppError =>
  SkillErrors.SKILL_VERSION_NOT_FOUND(`Version ${version} not found for marketplace skill ${skillId}`);
export const notInstalled = (skillId: string, agentId: string): AppError =>
  SkillErrors.SKILL_NOT_INSTALLED(`Marketplace skill ${skillId} is not installed on agent ${agentId}`);
export const notPublished = (skillId: string, version: string | undefined): AppError =>
  version === undefined
    ? SkillErrors.SKILL_VERSION_NOT_PUBLISHED(`Marketplace skill ${skillId} has no published version`, { version: null })
    : SkillErrors.SKILL_VERSION_NOT_PUBLISHED(`Version ${version} of marketplace skill ${skillId} is not published`, { version });

export const envValueRequired = (skillId: string, version: string, names: readonly string[]): AppError =>
  KernelErrors.ENV_VALUE_REQUIRED(`Version ${version} of marketplace skill ${skillId} requires a value for ${names.join(', ')}`, { skillId, version, names });
