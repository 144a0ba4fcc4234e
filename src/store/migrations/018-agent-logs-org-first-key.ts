/**
 * The platform copy's key led by the organization: (org_id, ts, id). Every log read is one
 * organization's, newest first (`org_id = $1 ... order by ts desc, id desc`), which this key serves
 * read backwards, so `agent_logs_org` (org_id, ts desc, id desc) held the same entries a second
 * time and is dropped: every stored record cost one index entry less. Uniqueness is unchanged (the
 * same three columns). Partitions take the new key with the parent; the index dropped on the parent
 * goes from every partition with it.
 */
export const sql = /* sql */ `
alter table agent_logs drop constraint agent_logs_pkey;
alter table agent_logs add primary key (org_id, ts, id);
drop index if exists agent_logs_org;
`;
