/**
 * The agent templates route family: the catalog, its authoring and the
 * version seal (spec 03 parts 2.5, 3, 4.4, 8, 9.3; contract templates).
 * Installs and deploys build on the service's exported reads.
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import type { Store } from '../../store/store.js';
import { templatesMigrations } from './migrations.js';
import { registerTemplateRoutes } from './routes.js';
import { createTemplatesService } from './service.js';

export interface TemplatesDeps {
  store: Store;
}

export const templatesFamily = defineFamily<TemplatesDeps>({
  name: 'templates',
  migrations: templatesMigrations,
  register(app: FastifyInstance, deps: TemplatesDeps) {
    registerTemplateRoutes(app, createTemplatesService({ store: deps.store }));
  },
});
