/**
 * The skills family's part of a template install (platform-deps.ts SkillInstallPort): a marketplace
 * skill the template names installed on the agent, in the install's unit of work, by the same
 * rules as POST /marketplace/install (visible to the agent's organization, a published version,
 * every required env value given, values sealed with the store's secret box). An install already on
 * the agent is kept as it is: the template's skills join what the agent has.
 */
import type { SecretBox } from '../../security/secret-box.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import type { SkillInstallOutcome, SkillInstallPort } from '../platform-deps.js';
import { createSkillsRepo } from './repository.js';
import { newestFirst } from './service.js';
import { SKILLS_TOPIC } from './topic.js';

export function createSkillTemplatePort(o: { secretBox: SecretBox }): SkillInstallPort {
  return {
    async install(tx: UnitOfWork, i): Promise<SkillInstallOutcome> {
      const r = createSkillsRepo(tx.sql);
      // The skill's row held, as the route's install holds it: its counters move once per install.
      if (!(await r.visible(i.skillId, [i.orgId], true))) return { outcome: 'refused', code: 'SKILL_NOT_FOUND', message: `Marketplace skill ${i.skillId} not found` };
      const present = await r.install(i.skillId, i.agentId);
      if (present) return { outcome: 'already-installed', version: present.version };
      const versions = (await r.versionsOf([i.skillId])).filter((v) => v.published).sort(newestFirst);
      const chosen = i.version === undefined ? versions[0] : versions.find((v) => v.version === i.version);
      if (!chosen) {
        return { outcome: 'refused', code: 'SKILL_VERSION_NOT_PUBLISHED', message: `Marketplace skill ${i.skillId} has no published version${i.version === undefined ? '' : ` ${i.version}`}` };
      }
      const given = Object.keys(i.envValues ?? {});
      const missing = Object.entries(chosen.envVarsMetadata ?? {}).filter(([name, meta]) => meta.required && !given.includes(name)).map(([name]) => name);
      if (missing.length > 0) {
        return { outcome: 'refused', code: 'ENV_VALUE_REQUIRED', message: `Version ${chosen.version} of marketplace skill ${i.skillId} requires a value for ${missing.join(', ')}` };
      }
      const at = new Date();
      const sealed = i.envValues === undefined ? null : o.secretBox.seal(JSON.stringify(i.envValues));
      if (!(await r.insertInstall({ skillId: i.skillId, agentId: i.agentId, orgId: i.orgId, version: chosen.version, installedAt: at }, sealed))) {
        return { outcome: 'already-installed', version: chosen.version };
      }
      await r.countInstall(i.skillId, { installs: 1, active: 1 }, at);
      tx.changed(SKILLS_TOPIC);
      await tx.audit({
        orgId: i.orgId, action: 'skills.install.created', actor: { type: 'user', id: i.userId }, targetType: 'agent', targetId: i.agentId,
        details: { skillId: i.skillId, version: chosen.version, envValueNames: given, via: 'template' },
      });
      return { outcome: 'installed', version: chosen.version };
    },
  };
}
