/**
 * The agent templates route family: the catalog, its authoring and the
 * version seal (spec 03 parts 2.5, 3, 4.4, 8, 9.3; contract templates).
 * Installs and deploys build on the service's exported reads.
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import type { KernelStore } from '../../store/kernel.js';
import { templatesMigrations } from './migrations.js';
import { registerTemplateRoutes } from './routes.js';
import { createTemplatesService } from './service.js';
import { installMigrations } from './install-migrations.js';
import { registerInstallRoutes } from './install-routes.js';
import { createInstallService } from './install-service.js';
import type { TemplatePorts } from '../platform-deps.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';
import { deployMigrations } from './deploy-migrations.js';
import { registerDeploys, type DeployModuleDeps } from './deploy-module.js';
import { deployInstalls } from './deploy-install.js';

export interface TemplatesDeps extends DeployModuleDeps {
  store: KernelStore;
  /** The persona, workflows and skills families' parts of an install (platform-deps.ts). */
  templatePorts: TemplatePorts;
  /** The kernel's read caches: the catalog's reads (service.ts). */
  reads: ReadCaches;
}

export const templatesFamily = defineFamily<TemplatesDeps>({
  name: 'templates',
  migrations: [...templatesMigrations, ...installMigrations, ...deployMigrations],
  register(app: FastifyInstance, deps: TemplatesDeps) {
    const templates = createTemplatesService({ store: deps.store, reads: deps.reads });
    const installs = createInstallService({ store: deps.store, templates, ports: deps.templatePorts });
    registerTemplateRoutes(app, templates, (p, id, body) => installs.publish(p, id, body));
    registerInstallRoutes(app, installs, deps.store);
    registerDeploys(app, deps, templates, deployInstalls(deps.store, templates, installs));
  },
});

/**
 * Installs for the deploy path: `applyInstall(tx, ...)` applies a version onto an agent on the
 * deploy's own unit of work (`minted: true` for an agent the deploy created), `afterCommit(result)`
 * once it committed (install-service.ts).
 */
export { createInstallService, knownInstallFields, type ApplyInput, type InstallRequest, type InstallResult, type InstallService, type InstallTarget } from './install-service.js';
