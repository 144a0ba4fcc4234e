/**
 * The persona family's part of a template install (platform-deps.ts PersonaApplyPort): the
 * template's persona made the agent's current persona as a new published version, in the
 * install's unit of work. An agent already serving a persona keeps it unless the install asks to
 * overwrite it (spec 03 part 2.5 `personaSkipped`). The digest lets an install tell whether the
 * agent changed the persona it applied (a new version, a draft published, an earlier one activated).
 */

/** JSON with object keys sorted: the same persona content serializes the same, however it was stored. */
const canonical = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
};
import { createHash } from 'node:crypto';
import type { Sql } from '../../store/sql.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import type { PersonaApplyOutcome, PersonaApplyPort } from '../platform-deps.js';
import { createPersonaRepo } from './repository.js';
import { PERSONA_TOPIC } from './topic.js';

export function createPersonaTemplatePort(): PersonaApplyPort {
  return {
    async apply(tx: UnitOfWork, a): Promise<PersonaApplyOutcome> {
      const r = createPersonaRepo(tx.sql);
      const state = await r.state(a.agentId);
      if (state.currentVersion !== null && !a.overwrite) return { applied: false, reason: 'persona-exists' };
      const version = await r.takeNumber(a.agentId);
      await r.insert({ agentId: a.agentId, version, status: 'published', persona: a.persona, config: state.config, createdBy: a.userId });
      await r.setCurrent(a.agentId, version);
      tx.changed(PERSONA_TOPIC);
      await tx.audit({
        orgId: a.orgId, action: 'persona.version.created', actor: { type: 'user', id: a.userId }, targetType: 'agent', targetId: a.agentId,
        details: { version, via: 'template' },
      });
      return { applied: true, version };
    },

    async digest(sql: Sql, agentId: string): Promise<string | null> {
      const r = createPersonaRepo(sql);
      const { currentVersion } = await r.state(agentId);
      if (currentVersion === null) return null;
      const current = await r.get(agentId, currentVersion);
      return current ? createHash('sha256').update(canonical(current.persona)).digest('hex') : null;
    },
  };
}
