/**
 * What a process runs of the families without their routes: their tables (for openStore, `migrate`
 * and `seed`), the workflow executor and the channel notifications it sends. A `logdrain worker`
 * imports this and not index.ts, so it loads none of the API: fastify, the routes and their
 * schemas cost a worker some 35 MB of memory and half a second of start-up for nothing.
 */
import type { Migration } from '../store/migrate.js';
import { telephonyMigrations } from './telephony/migrations.js';
import { channelMigrations } from './channels/migrations.js';
import { personaMigrations } from './persona/migrations.js';
import { workflowMigrations } from './workflows/migrations.js';
import { skillsMigrations } from './skills/migrations.js';
import { templatesMigrations } from './templates/migrations.js';
import { installMigrations } from './templates/install-migrations.js';
import { deployMigrations } from './templates/deploy-migrations.js';

/**
 * Every family's migrations, in the order the families are registered (index.ts); the same as
 * each family's own `migrations`, which a test holds them to.
 */
export const familyMigrations: readonly Migration[] = [
  ...telephonyMigrations,
  ...channelMigrations,
  ...personaMigrations,
  ...workflowMigrations,
  ...skillsMigrations,
  ...templatesMigrations, ...installMigrations, ...deployMigrations,
];

/** The workflow executor (and notification sender) a `logdrain worker` runs beside its delivery pipeline. */
export { createWorkflowExecutor, type WorkflowExecutor } from './workflows/background.js';

/** The channels family's send port for the other families (platform-deps.ts), built by the composition roots. */
export { createChannelNotifications } from './channels/notifications.js';
