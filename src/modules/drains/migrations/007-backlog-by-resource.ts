/**
 * The backlog pump reads a drain's parked records resource by resource
 * (keyset pages over (resource, id)), so that each page holds long runs of
 * one agent's records and goes out in full batches, however many agents
 * interleave in the stream. The index holds the resource as a 64-bit hash
 * (hashtextextended, the stable hash of hash partitioning), not its JSON: an
 * entry of 8 bytes instead of about 250 makes the index far cheaper to
 * write, and it is written once per parked record. Two resources sharing a
 * hash share a group, each still in order of id.
 */
export const sql = /* sql */ `
create index drain_backlog_resource on drain_backlog (drain_id, hashtextextended(resource_json, 0), id);
`;
