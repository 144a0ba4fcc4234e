/**
 * The read-cache topic of the skill tables (`skills`, `skills_versions`): every unit of work that
 * writes them says so (`tx.changed`): the service's units and a template install's skill install
 * (template-port.ts).
 */
export const SKILLS_TOPIC = 'skills.catalog';
