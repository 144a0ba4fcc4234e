/**
 * The audit log read by the kind of thing an entry is about: the drain audit route pages through
 * an organization's `log_drain` entries only, newest first, among every family's entries.
 */
export const sql = /* sql */ `
create index audit_log_org_target_time on audit_log (org_id, target_type, at desc, id desc);
`;
