/**
 * The drain route family: /admin/orgs/:orgId/log-drains and its operations. Its tables are the
 * delivery engine's too: they (tables/) and their migrations (migrations/, listed among the store
 * kernel's under the ids they were released with) import nothing of the REST layer, so the engine
 * may import them; the composition root hands them to the family as `drainTables`.
 */
import type { FastifyInstance } from 'fastify';
import type { DrainDeps } from './context.js';
import { defineFamily } from '../../api/kernel/family.js';
import { createDrainReadCache } from './read-cache.js';
import { createDrainService } from './service.js';
import { registerDrainRoutes } from './routes.js';
import { registerReplayRoutes } from './replays.js';

export const drainsFamily = defineFamily<DrainDeps>({
  name: 'drains',
  async register(app: FastifyInstance, deps: DrainDeps) {
    const reads = await createDrainReadCache(deps.drainTables, { listen: deps.config.drainConfigListen });
    app.addHook('onClose', () => reads.stop());
    registerDrainRoutes(app, deps, createDrainService(deps), reads);
    registerReplayRoutes(app, deps);
  },
});

export type { DrainDeps };
