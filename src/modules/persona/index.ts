/** The persona route family: an agent's persona versions, drafts, presets and enhance routes (spec 03 part 4.1). */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import type { Config } from '../../config/config.js';
import type { Store } from '../../store/store.js';
import type { ModelProvider } from '../../vendors/model-provider/port.js';
import { createGuardedFetcher } from '../../security/guarded-fetch.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { holdsText, LONE_SURROGATE } from '../../model/record.js';
import { personaMigrations } from './migrations.js';
import { personaPresetsSeed } from './presets.js';
import { registerPersonaRoutes } from './routes.js';
import { createPersonaService } from './service.js';

export interface PersonaDeps {
  config: Config;
  store: Store;
  /** The model-provider port (src/vendors/model-provider/), its adapter chosen from configuration. */
  vendors: { modelProvider: ModelProvider };
}

const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`);

export const personaFamily = defineFamily<PersonaDeps>({
  name: 'persona',
  migrations: personaMigrations,
  seed: personaPresetsSeed,
  register(app: FastifyInstance, deps: PersonaDeps) {
    // Postgres text and jsonb cannot hold NUL or half a surrogate pair: refused in any string of a body.
    app.addHook('preHandler', async (req) => {
      if (req.body !== undefined && holdsText(req.body, UNSTORABLE)) {
        const rule = 'the body must not contain NUL characters or unpaired surrogates';
        throw KernelErrors.VALIDATION_FAILED(rule, { field: 'body', message: [rule] });
      }
    });
    const fetcher = createGuardedFetcher({ allowHosts: deps.config.websiteFetchAllowHosts, extraCaCerts: deps.config.extraCaCerts });
    app.addHook('onClose', () => fetcher.close());
    const service = createPersonaService({ store: deps.store, provider: deps.vendors.modelProvider, fetcher });
    registerPersonaRoutes(app, { service, deprecatedScopesSunset: deps.config.deprecatedScopesSunset });
  },
});
