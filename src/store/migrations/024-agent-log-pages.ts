/**
 * The platform copy as pages (modules/logs/pages.ts): up to 500 records of one organization and
 * UTC day a row, their JSON one a line (`body`), a summary line each in the same order (`meta`:
 * time in milliseconds, id, agent, source, environment, and a skill record's skill id, as a JSON
 * array), with the page's first and last time and its keys (each agent, and each agent's skill of
 * a skill record, `s:<agent>\x1f<skill>`). A row a record cost
 * Postgres a heap tuple, a key and two index entries a record; a page costs one tuple, its body
 * compressed out of line, and three index entries a page.
 *
 * The records the row layout holds become pages of its own order, and `agent_logs` becomes a view
 * of the pages a record a row, each record once by (org_id, ts, id) as the row layout's key kept
 * it: for ad hoc queries and checks. The log reads do not use it: they decode only the pages a
 * selection can reach (modules/logs/repository.ts).
 */
export const sql = String.raw`
create table agent_log_pages (
  day date not null,
  org_id text not null,
  ts_min timestamptz not null,
  ts_max timestamptz not null,
  page text not null,
  records int not null,
  keys text[] not null,
  meta text not null,
  body text not null
) partition by range (day);
create index agent_log_pages_newest on agent_log_pages (org_id, ts_max desc, page desc);
create index agent_log_pages_oldest on agent_log_pages (org_id, ts_min, page);
create index agent_log_pages_keys on agent_log_pages using gin (keys);

do $$
declare d date;
begin
  for d in select distinct (ts at time zone 'UTC')::date from agent_logs loop
    execute format('create table if not exists %I partition of agent_log_pages for values from (%L) to (%L)', 'agent_log_pages_' || to_char(d, 'YYYYMMDD'), d, d + 1);
  end loop;
end $$;

insert into agent_log_pages (day, org_id, ts_min, ts_max, page, records, keys, meta, body)
select day, org_id, min(ts), max(ts), 'migrated-' || md5(org_id || ' ' || day::text || ' ' || chunk::text), count(*)::int,
  array_agg(distinct 'a:' || agent_id) || coalesce(array_agg(distinct 's:' || agent_id || E'\x1f' || skill_id) filter (where skill_id is not null), '{}'::text[]),
  string_agg(case when skill_id is null then json_build_array(ms, id, agent_id, source, environment) else json_build_array(ms, id, agent_id, source, environment, skill_id) end::text, E'\n' order by ts, id),
  string_agg(line, E'\n' order by ts, id)
from (
  select ts, id, org_id, agent_id, (ts at time zone 'UTC')::date as day,
    (row_number() over (partition by org_id, (ts at time zone 'UTC')::date order by ts, id) - 1) / 500 as chunk,
    (extract(epoch from ts) * 1000)::bigint as ms, source, environment,
    case when source = 'skill' and jsonb_typeof(attributes -> 'skillId') = 'string' and length(attributes ->> 'skillId') <= 100 then attributes ->> 'skillId' end as skill_id,
    json_strip_nulls(json_build_object(
      'id', id, 'orgId', org_id, 'agentId', agent_id, 'agentName', agent_name, 'agentVersion', agent_version,
      'environment', environment, 'source', source, 'event', event, 'severity', severity,
      'timestamp', to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'executionId', execution_id, 'message', message, 'traceId', trace_id, 'spanId', span_id, 'attributes', attributes
    ))::text as line
  from agent_logs
) r
group by day, org_id, chunk;

drop table agent_logs;

create view agent_logs as
select distinct on (p.org_id, r.ts, r.id)
  r.ts, r.id, p.org_id, r.agent_id, r.agent_name, r.agent_version, r.environment, r.source, r.event, r.severity,
  r.execution_id, r.message, r.trace_id, r.span_id, r.attributes
from agent_log_pages p
cross join lateral (
  select date_trunc('milliseconds', (j ->> 'timestamp')::timestamptz) as ts, j ->> 'id' as id, j ->> 'agentId' as agent_id,
    j ->> 'agentName' as agent_name, j ->> 'agentVersion' as agent_version, j ->> 'environment' as environment,
    j ->> 'source' as source, j ->> 'event' as event, j ->> 'severity' as severity, j ->> 'executionId' as execution_id,
    j ->> 'message' as message, j ->> 'traceId' as trace_id, j ->> 'spanId' as span_id, (j -> 'attributes')::jsonb as attributes
  from (select line::json as j from string_to_table(p.body, E'\n') as line) l
) r
order by p.org_id, r.ts, r.id;
`;
