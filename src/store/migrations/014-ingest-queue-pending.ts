/**
 * The embedded queue written in slices. On the embedded store a large ingest
 * is written a few records a statement, with turns of the event loop between
 * them (a transaction would hold every other statement of the process until
 * it committed); its rows carry `pending` (the write's id) until one last
 * statement publishes them all, and a reader stops at the first pending row,
 * so a body is consumed whole or not at all. Rows a stopped process left
 * pending are deleted when its queue is next read.
 *
 * Queue payloads are kept uncompressed: a row lives until every consumer has
 * passed it, and compressing a 240 KB record took as long as writing it, on
 * the thread that answers requests.
 */
export const sql = /* sql */ `
alter table ingest_queue add column pending text;
create index ingest_queue_pending on ingest_queue (seq) where pending is not null;
alter table ingest_queue alter column payload set storage external;
`;
