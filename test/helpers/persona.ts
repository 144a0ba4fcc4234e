/** What the persona route suites share: the seed file with agents, keys and presets of their own, and paths. */
export const PERSONA_SEED = new URL('../fixtures/seed-persona.json', import.meta.url).pathname;
export const agentPath = (agentId: string): string => `/developer/agents/${agentId}`;
export const PRESETS = '/developer/agents/persona/presets';
/** `agents:*` on org_acme's org-visible agents. */
export const ALL = 'lk_p_all';
