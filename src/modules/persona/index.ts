/** The persona route family: an agent's persona versions, drafts, presets and enhance routes (spec 03 part 4.1). */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import type { Config } from '../../config/config.js';
import type { KernelStore } from '../../store/kernel.js';
import type { ModelProvider } from '../../vendors/model-provider/port.js';
import { createGuardedFetcher } from '../../security/guarded-fetch.js';
import { personaMigrations } from './migrations.js';
import { personaPresetsSeed } from './presets.js';
import { registerPersonaRoutes } from './routes.js';
import { createPersonaService } from './service.js';
import type { ReadCaches } from '../../api/kernel/read-cache.js';

export interface PersonaDeps {
  /** The website fetch's allow list and CA certificates, and the deprecated scopes' sunset. */
  config: Pick<Config, 'websiteFetchAllowHosts' | 'extraCaCerts' | 'deprecatedScopesSunset'>;
  store: KernelStore;
  /** The model-provider port (src/vendors/model-provider/), its adapter chosen from configuration. */
  vendors: { modelProvider: ModelProvider };
  /** The kernel's read caches (api/kernel/read-cache.ts). */
  reads: ReadCaches;
}

export const personaFamily = defineFamily<PersonaDeps>({
  name: 'persona',
  migrations: personaMigrations,
  seed: personaPresetsSeed,
  register(app: FastifyInstance, deps: PersonaDeps) {
    const fetcher = createGuardedFetcher({ allowHosts: deps.config.websiteFetchAllowHosts, extraCaCerts: deps.config.extraCaCerts });
    app.addHook('onClose', () => fetcher.close());
    const service = createPersonaService({ store: deps.store, reads: deps.reads, provider: deps.vendors.modelProvider, fetcher });
    registerPersonaRoutes(app, { service, deprecatedScopesSunset: deps.config.deprecatedScopesSunset });
  },
});

/** The persona family's part of a template install (platform-deps.ts), for the composition root. */
export { createPersonaTemplatePort } from './template-port.js';
