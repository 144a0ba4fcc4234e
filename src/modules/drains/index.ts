/** The drain route family: /admin/orgs/:orgId/log-drains and its operations. */
import type { FastifyInstance } from 'fastify';
import type { DrainDeps } from './context.js';
import { defineFamily } from '../../api/kernel/family.js';
import { registerCrudRoutes } from './crud.js';
import { createDrainReadCache } from './read-cache.js';
import { registerOperationRoutes } from './operations.js';
import { registerDeliveryRoutes } from './deliveries.js';
import { registerAuditRoutes } from './audit-route.js';
import { registerReplayRoutes } from './replays.js';

export const drainsFamily = defineFamily<DrainDeps>({
  name: 'drains',
  async register(app: FastifyInstance, deps: DrainDeps) {
    const reads = await createDrainReadCache(deps.store, { listen: deps.config.drainConfigListen });
    app.addHook('onClose', () => reads.stop());
    registerCrudRoutes(app, deps, reads);
    registerOperationRoutes(app, deps);
    registerDeliveryRoutes(app, deps);
    registerAuditRoutes(app, deps);
    registerReplayRoutes(app, deps);
  },
});

export type { DrainDeps };
