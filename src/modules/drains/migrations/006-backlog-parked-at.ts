/**
 * The backlog pump drops records parked past BUFFER_HORIZON_MS every pass.
 * Without an index on when rows were parked, that `delete` read every parked
 * row of the drain (about 300 ms a pass with a million parked); with it, a
 * pass reads only the index range of expired rows, usually none.
 */
export const sql = /* sql */ `
create index drain_backlog_parked_at on drain_backlog (drain_id, enqueued_at);
`;
