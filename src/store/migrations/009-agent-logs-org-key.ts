/**
 * The platform copy's key includes the organization: (ts, org_id, id). With
 * (ts, id) and `on conflict do nothing`, a record of one organization carrying
 * another's id and timestamp took that key first, and the other's record was
 * never stored (it vanished from its log reads). Record ids are unique within
 * an organization only; re-reads of one organization's record stay single.
 * Partitions take the new key with the parent.
 */
export const sql = /* sql */ `
alter table agent_logs drop constraint agent_logs_pkey;
alter table agent_logs add primary key (ts, org_id, id);
`;
