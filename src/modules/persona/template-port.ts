/**
 * The persona family's part of a template install (platform-deps.ts PersonaApplyPort): the
 * template's persona made the agent's current persona as a new published version, in the
 * install's unit of work. An agent already serving a persona keeps it unless the install asks to
 * overwrite it (spec 03 part 2.5 `personaSkipped`).
 */
import type { UnitOfWork } from '../../store/unit-of-work.js';
import type { PersonaApplyOutcome, PersonaApplyPort } from '../platform-deps.js';
import { createPersonaRepo } from './repository.js';

export function createPersonaTemplatePort(): PersonaApplyPort {
  return {
    async apply(tx: UnitOfWork, a): Promise<PersonaApplyOutcome> {
      const r = createPersonaRepo(tx.sql);
      const state = await r.state(a.agentId);
      if (state.currentVersion !== null && !a.overwrite) return { applied: false, reason: 'persona-exists' };
      const version = await r.takeNumber(a.agentId);
      await r.insert({ agentId: a.agentId, version, status: 'published', persona: a.persona, config: state.config, createdBy: a.userId });
      await r.setCurrent(a.agentId, version);
      await tx.audit({
        orgId: a.orgId, action: 'persona.version.created', actor: { type: 'user', id: a.userId }, targetType: 'agent', targetId: a.agentId,
        details: { version, via: 'template' },
      });
      return { applied: true, version };
    },
  };
}
