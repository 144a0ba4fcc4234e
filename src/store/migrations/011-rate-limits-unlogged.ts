/**
 * Rate-limit windows are counters of the current minute: losing them in a crash costs at most one
 * window's budget, so they skip the write-ahead log. A commit that touched only them does not wait
 * for a WAL flush: measured, the per-request upsert took 4 to 5 ms on Postgres, most of it that
 * flush, and one organization's requests queue on its window's row for each of them.
 */
export const sql = /* sql */ `
alter table rate_limit_windows set unlogged;
`;
