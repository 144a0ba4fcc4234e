/**
 * The deploy half of the templates family, as the family's index registers it: the deploy job of
 * this process (started when the API is ready, stopped as it closes), the deploy service over the
 * family's catalog and install sides (`DeployPorts`, the install step), and the routes.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Logger } from '../../telemetry/logger.js';
import { createDeployJob, LeaseLost, type DeployJobRequest } from './deploy-job.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import { createDeployService, deployResultOf, openDeployBody, type DeployCatalog, type DeployInstalls, type DeployService } from './deploy-service.js';
import { registerDeployRoutes } from './deploy-routes.js';

export interface DeployModuleDeps {
  config: Pick<Config, 'templateDeploys'>;
  store: KernelStore;
  logger: Logger;
}

/** Installs the template on the minted agent as the deploying user, on `tx` (the install service); the install result, or throws an AppError when refused. */
export type DeployInstall = (tx: UnitOfWork, r: DeployJobRequest, body: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** The install side as a deploy uses it (deploy-install.ts). */
export interface DeployInstallSide extends DeployInstalls {
  install: DeployInstall;
  /** Once the install's unit of work committed (a workflow run its hook queued is looked for). */
  afterCommit(installed: Record<string, unknown>): void;
}

export function registerDeploys(app: FastifyInstance, deps: DeployModuleDeps, catalog: DeployCatalog, installs: DeployInstallSide): DeployService {
  const c = deps.config.templateDeploys;
  const job = createDeployJob({
    store: deps.store, logger: deps.logger, leaseMs: c.leaseMs, pollMs: c.pollMs, slots: c.slots, answerWaitMs: c.answerWaitMs, hold: c.hold,
    steps: {
      install: async (r, settle) => {
        const { result, installed } = await deps.store.unitOfWork(async (tx) => {
          const installed = await installs.install(tx, r, openDeployBody(deps.store, r));
          const result = deployResultOf({ agent_id: r.agentId, org_id: r.orgId }, installed);
          if (!(await settle(tx.sql, result))) throw new LeaseLost(`deploy ${r.deployId} is no longer this job's`);
          return { result, installed };
        });
        installs.afterCommit(installed);
        return result;
      },
      removeAgent: (r) => deps.store.unitOfWork(async (tx) => {
        if (!(await tx.tenancy.removeAgent(r.orgId, r.agentId))) return;
        await tx.audit({
          orgId: r.orgId, action: 'templates.agent.removed', actor: { type: 'user', id: r.requestedBy }, targetType: 'agent', targetId: r.agentId,
          details: { deployId: r.deployId, templateId: r.templateId, reason: 'deploy-refused' },
        });
      }),
    },
  });
  if (c.jobs) {
    app.addHook('onReady', async () => job.start());
    app.addHook('onClose', async () => job.stop());
  }
  const service = createDeployService({ store: deps.store, catalog, installs, job, answerWaitMs: c.answerWaitMs });
  registerDeployRoutes(app, service);
  return service;
}

