/**
 * The hourly counters account for every record of a drain's organization that reached the drain:
 * `seen`, and the records not delivered by reason (model/drop-reasons.ts). `dropped` stays the sum
 * of the failure reasons; hours written before this migration carry their `dropped` without reasons.
 */
export const sql = /* sql */ `
alter table drain_hourly
  add column seen integer not null default 0,
  add column drop_quota integer not null default 0,
  add column drop_horizon integer not null default 0,
  add column drop_permanent integer not null default 0,
  add column drop_oversize integer not null default 0,
  add column drop_dead_letter integer not null default 0,
  add column drop_sampling integer not null default 0,
  add column drop_selector integer not null default 0;
`;
