/**
 * One counter for all drain configuration, moved by every statement that
 * writes the drains table (in that statement's transaction), and a
 * notification on commit. A worker routes a record only with plans at least
 * as new as the counter it read after the record arrived (drain-plans.ts):
 * comparing one number replaces the old fingerprint of the whole table, whose
 * max(updated_at) could miss a write committed out of start order. The
 * notification only makes workers reload at once, so that check rarely has to.
 */
export const sql = /* sql */ `
create table drain_config_version (
  id smallint primary key default 1 check (id = 1),
  seq bigint not null
);
insert into drain_config_version (id, seq) values (1, 0);

create function drain_config_changed() returns trigger language plpgsql as $$
begin
  update drain_config_version set seq = seq + 1 where id = 1;
  perform pg_notify('logdrain_drain_config', '');
  return null;
end
$$;

create trigger drains_config_changed after insert or update or delete or truncate on drains
  for each statement execute function drain_config_changed();
`;
