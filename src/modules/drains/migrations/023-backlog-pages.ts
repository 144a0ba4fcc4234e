/**
 * The backlog stored a page at a time: one row per (drain, resource bucket, park statement) holding
 * its records' JSON as newline-joined texts and their ids, sizes and scrub hits as arrays. A row a
 * record cost Postgres a heap tuple and four index entries for every record written, and again a
 * tuple read and a delete for every record delivered; a page pays them once for all its records
 * (benchmarks-engine-findings.md, the backlog as pages). The resource bucket (tables/backlog-pages.ts) keeps a
 * resource's records in one sequence of pages, so rounds still read them resource group by group.
 *
 * Records already parked move over as pages of one record each in bucket -1, read before any other
 * bucket: each of them is older than every record parked from now, so every resource's order holds.
 * `done` lists the positions of a page's records already delivered (a round stopped part-way).
 * `drain_backlog` stays, as a view of the records not yet delivered, for reading by hand.
 * A page's JSON texts are compressed with lz4 where the server has it (PGlite has not: pglz there):
 * a page is several KB, so stored out of line in 2 KB chunks, and lz4 makes about a third as many
 * chunks to write, read and delete for less CPU than it saves (benchmarks-engine-findings.md).
 */
export const sql = /* sql */ `
create table drain_backlog_pages (
  id bigserial primary key,
  drain_id text not null,
  org_id text not null,
  bucket integer not null,
  records integer not null,
  bytes bigint not null,
  resource_json text not null,
  record_json text not null,
  record_ids text[] not null,
  record_bytes integer[] not null,
  scrub_hits integer[] not null,
  done integer[] not null default '{}',
  enqueued_at timestamptz not null default now()
);
do $lz4$ begin
  alter table drain_backlog_pages alter column resource_json set compression lz4, alter column record_json set compression lz4;
exception when feature_not_supported or invalid_parameter_value then null;
end $lz4$;
create index drain_backlog_pages_drain on drain_backlog_pages (drain_id, id);
create index drain_backlog_pages_bucket on drain_backlog_pages (drain_id, bucket, id);
create index drain_backlog_pages_parked_at on drain_backlog_pages (drain_id, enqueued_at);

insert into drain_backlog_pages (drain_id, org_id, bucket, records, bytes, resource_json, record_json, record_ids, record_bytes, scrub_hits, enqueued_at)
select drain_id, org_id, -1, 1, bytes, replace(resource_json, E'\\n', ' '), replace(record_json, E'\\n', ' '),
       array[record_id], array[bytes], array[scrub_hits], enqueued_at
from drain_backlog order by id;
drop table drain_backlog;

create view drain_backlog as
select p.id * 1024 + r.i - 1 as id, p.drain_id, p.org_id, r.resource_json, r.record_json, r.record_id, r.bytes, r.scrub_hits, p.enqueued_at
from drain_backlog_pages p
cross join lateral unnest(string_to_array(p.resource_json, E'\\n'), string_to_array(p.record_json, E'\\n'), p.record_ids, p.record_bytes, p.scrub_hits)
  with ordinality as r(resource_json, record_json, record_id, bytes, scrub_hits, i)
where not (r.i::int = any(p.done));

create function drain_backlog_delete() returns trigger language plpgsql as $body$
declare
  page bigint := old.id / 1024;
  place integer := (old.id % 1024)::integer + 1;
begin
  delete from drain_backlog_pages where id = page and records <= 1 and not (place = any(done));
  if not found then
    update drain_backlog_pages set done = done || place, records = records - 1, bytes = bytes - record_bytes[place]
     where id = page and not (place = any(done));
  end if;
  return old;
end
$body$;
create trigger drain_backlog_delete instead of delete on drain_backlog for each row execute function drain_backlog_delete();
`;
