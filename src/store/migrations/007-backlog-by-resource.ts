/**
 * The backlog pump reads a drain's parked records resource by resource
 * (keyset pages over (resource, id)), so that each page holds long runs of
 * one agent's records and goes out in full batches, however many agents
 * interleave in the stream. Byte order ("C") keeps the keyset comparison the
 * index's own, whatever the database's default collation.
 */
export const sql = /* sql */ `
create index drain_backlog_resource on drain_backlog (drain_id, resource_json collate "C", id);
`;
