/** The marketplace skills route family: listing, versions, the catalogue and installs on agents (spec 03 part 4.5; contract skills). */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import type { KernelStore } from '../../store/kernel.js';
import { skillsMigrations } from './migrations.js';
import { skillsSeed } from './seed.js';
import { registerSkillRoutes } from './routes.js';
import { createSkillsService } from './service.js';
import type { FamilyMetrics } from '../platform-deps.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';

export interface SkillsDeps {
  store: KernelStore;
  /** Installs created, updated and removed (/metrics). */
  metrics: FamilyMetrics;
  /** The kernel's read caches: the search's pages (service.ts). */
  reads: ReadCaches;
}

export const skillsFamily = defineFamily<SkillsDeps>({
  name: 'skills',
  migrations: skillsMigrations,
  seed: skillsSeed,
  register(app: FastifyInstance, deps: SkillsDeps) {
    registerSkillRoutes(app, createSkillsService({ store: deps.store, metrics: deps.metrics, reads: deps.reads }));
  },
});

/** The skills family's part of a template install (platform-deps.ts), for the composition root. */
export { createSkillTemplatePort } from './template-port.js';
