/**
 * The install side of a deploy (install-service.ts): the template applied onto the minted agent on
 * the deploy job's unit of work, as the user who deployed it, and the agents that have a template.
 */
import type { KernelStore } from '../../store/kernel.js';
import type { Principal } from '../../api/kernel/auth.js';
import type { DeployInstallSide } from './deploy-module.js';
import { knownInstallFields, type InstallService } from './install-service.js';
import type { TemplatesService } from './service.js';
import { createTemplatesRepo } from './repository.js';
import { createInstallRepo } from './install-repository.js';
import { templateNotFound } from './errors.js';

/**
 * The deploying user as the install's principal: the job runs after the request (and maybe in
 * another process), so it acts for the person who asked, by id (results' `installedBy`, the audit's actor).
 */
const deployer = (userId: string, deployId: string): Principal => ({
  kind: 'session', userId, keyOrgId: undefined, scopes: null, agentGrants: [], credentialId: `deploy:${deployId}`,
});

export function deployInstalls(store: KernelStore, templates: TemplatesService, installs: InstallService): DeployInstallSide {
  return {
    async installedAgents(templateId, orgId) {
      return createInstallRepo(store.sql).agentsInstalledIn(templateId, orgId);
    },
    async install(tx, r, body) {
      // Seen from the target organization (public, or its own): a template made private since the
      // request by another organization is not installed (the deploy is refused and rolled back).
      const template = await createTemplatesRepo(tx.sql).visible(r.templateId, [r.orgId]);
      if (!template) throw templateNotFound(r.templateId);
      const version = await templates.readVersion(r.templateId, r.version, tx.sql);
      const agent = await createInstallRepo(tx.sql).targetAgent(r.agentId);
      if (!agent) throw new Error(`the minted agent ${r.agentId} of deploy ${r.deployId} is gone`);
      const result = await installs.applyInstall(tx, {
        principal: deployer(r.requestedBy, r.deployId), template, version, agent: { id: agent.id, orgId: agent.org_id, version: agent.version },
        request: knownInstallFields(body), minted: true,
      });
      return result as unknown as Record<string, unknown>;
    },
    afterCommit: (installed) => installs.afterCommit(installed as Parameters<InstallService['afterCommit']>[0]),
  };
}
