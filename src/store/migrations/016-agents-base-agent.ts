/**
 * A base agent (CONTRACT part 6, seed `agents[].baseAgent`): an agent a template can be deployed
 * from. Every agent written before is not one.
 */
export const sql = `
alter table agents add column base_agent boolean not null default false;
`;
