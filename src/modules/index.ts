/**
 * The route families the API serves, one line each: a new family is a folder
 * beside this file and a line here. The API registers them in this order
 * (src/server.ts); their tables are applied when the store opens.
 */
import type { Family } from '../api/kernel/family.js';
import type { SeedSection } from '../seed/seed-file.js';
import type { PlatformDeps, TemplatePorts } from './platform-deps.js';
import type { KernelStore } from '../store/kernel.js';
import type { Logger } from '../telemetry/logger.js';
import { drainsFamily } from './drains/index.js';
import { logsFamily } from './logs/index.js';
import { ingestFamily } from './ingest/index.js';
import { telephonyFamily } from './telephony/index.js';
import { channelsFamily } from './channels/index.js';
import { createPersonaTemplatePort, personaFamily } from './persona/index.js';
import { createWorkflowsTemplatePort, workflowsFamily } from './workflows/index.js';
import { createSkillTemplatePort, skillsFamily } from './skills/index.js';
import { templatesFamily } from './templates/index.js';

export const families: readonly Family<PlatformDeps>[] = [
  drainsFamily,
  logsFamily,
  ingestFamily,
  telephonyFamily,
  channelsFamily,
  personaFamily,
  workflowsFamily,
  skillsFamily,
  templatesFamily,
];

/** Every family's migrations, for openStore (listed apart from the routes, for the worker). */
export { familyMigrations } from './background.js';

/** Every family's seed array, for the seed loader (readSeedFile). */
export const familySeeds: readonly SeedSection[] = families.flatMap((f) => f.seed ?? []);

/** The channels family's send port for the other families (platform-deps.ts, background.ts), built by the composition roots. */
export { createChannelNotifications } from './background.js';

/** The persona, workflows and skills families' parts of a template install (platform-deps.ts TemplatePorts). */
export function createTemplatePorts(deps: { store: KernelStore; logger: Logger }): TemplatePorts {
  return {
    persona: createPersonaTemplatePort(),
    workflows: createWorkflowsTemplatePort(deps),
    skills: createSkillTemplatePort({ secretBox: deps.store.secretBox }),
  };
}

export type { PlatformDeps };
