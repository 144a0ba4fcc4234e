/**
 * The read-cache topic of the persona tables (an agent's versions and its current one): every unit
 * of work that writes them says so (`tx.changed`): the service's, and a template install's persona
 * step (template-port.ts).
 */
export const PERSONA_TOPIC = 'persona.versions';
