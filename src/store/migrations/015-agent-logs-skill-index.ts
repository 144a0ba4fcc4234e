/**
 * A skill's logs (GET /developer/:agentId/:skillId/logs): an agent's records with `source = 'skill'`
 * whose `attributes.skillId` is the skill's id, newest first. `attributes` is a jsonb column with no
 * index, so without this one the read walks every record of the agent (agent_logs_agent) and looks
 * inside each one's attributes; a skill that logged once in a week of busy traffic costs a scan of
 * the week. This index holds only skill records (partial on the source, so the ingest path pays for
 * it on those rows alone) and orders them as the read pages: equality on organization, agent and the
 * `skillId` value (the jsonb value, so a number 42 is not the id "42"), then time and id descending,
 * so a page and its keyset continuation are a bounded index range and the count stops at its cap.
 * A GIN index over `attributes` would find the rows but not in order (every match sorted per page).
 * Created on the partitioned parent, it is created on every partition and on each one made later.
 */
export const sql = /* sql */ `
create index agent_logs_skill on agent_logs (org_id, agent_id, (attributes -> 'skillId'), ts desc, id desc) where source = 'skill';
`;
