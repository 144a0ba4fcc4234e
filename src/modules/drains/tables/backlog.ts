import type { Sql } from '../../../store/sql.js';
import type { DrainGauge } from '../../../model/drain.js';

export interface ParkedRecord {
  drainId: string;
  orgId: string;
  resourceJson: string;
  recordJson: string;
  recordId: string;
  bytes: number;
  scrubHits: number;
}

/** A parked record as the pump reads it back: what a batch needs, nothing more. */
export interface BacklogRow {
  id: number;
  /** The 64-bit hash the backlog is ordered by (migration 007), as text: rows of a resource share it. */
  resourceKey: string;
  resourceJson: string;
  recordJson: string;
  recordId: string;
  bytes: number;
  scrubHits: number;
}

/** Where a page read resource by resource ended. */
export interface ResourceCursor {
  resourceKey: string;
  id: number;
}

interface RawRow {
  id: string; rkey: string; resource_json: string; record_json: string; record_id: string; bytes: number; scrub_hits: number;
}

/** The resource's key, as the index holds it (migration 007). */
const RKEY = 'hashtextextended(resource_json, 0)';
const ROW_COLUMNS = `id, ${RKEY}::text as rkey, resource_json, record_json, record_id, bytes, scrub_hits`;

const toRows = (rows: readonly RawRow[]): BacklogRow[] =>
  rows.map((r) => ({
    id: Number(r.id), resourceKey: String(r.rkey), resourceJson: r.resource_json, recordJson: r.record_json, recordId: r.record_id, bytes: r.bytes, scrubHits: r.scrub_hits,
  }));

/**
 * Parked rows written by one statement (about half a MB of JSON text). A statement's joined texts
 * and pg's message carrying them exist at once, each the size of the statement, and outlive the
 * young generation while Postgres reads them: at 2,000 rows (2 MB) a statement, a spilling
 * worker's parks were a large share of its external memory (benchmarks.md, memory). The insert's
 * per-row work is the same at 500; only the statement's own overhead is paid four times as often.
 */
export const PARK_ROWS = 500;

/**
 * JSON texts joined by newlines. A raw newline in JSON text can only be whitespace between tokens
 * (inside a string it is escaped), so one, which JSON.stringify never writes, becomes a space: the
 * same JSON value, and the join stays unambiguous.
 */
function lines(rows: readonly ParkedRecord[], json: (r: ParkedRecord) => string): string {
  let text = '';
  for (let i = 0; i < rows.length; i++) {
    const j = json(rows[i]!);
    text += (i > 0 ? '\n' : '') + (j.includes('\n') ? j.replace(/\n/g, ' ') : j);
  }
  return text;
}

export function createBacklogRepo(sql: Sql) {
  return {
    /**
     * One insert per PARK_ROWS rows, in order. The two JSON columns, most of a row, travel as one
     * text each, the rows' texts joined by newlines and split by Postgres (string_to_array): no
     * escaping on either side. As a JSON array of rows (json_to_recordset) Postgres spent more time
     * parsing the statement's parameter than inserting its rows, and the worker escaped every quote of
     * every record's JSON; as Postgres arrays, pg's serializer escaped them in JavaScript. A
     * spilling worker's flush can hold every record in flight (20,000, about 20 MB of JSON text): in
     * one statement that was a 20 MB string and pg's 20 MB message buffer at once.
     */
    async park(rows: readonly ParkedRecord[]): Promise<void> {
      for (let from = 0; from < rows.length; from += PARK_ROWS) {
        const chunk = rows.slice(from, from + PARK_ROWS);
        await sql.query(
          `insert into drain_backlog (drain_id, org_id, resource_json, record_json, record_id, bytes, scrub_hits)
           select * from unnest($1::text[], $2::text[], string_to_array($3, E'\\n'), string_to_array($4, E'\\n'), $5::text[], $6::int[], $7::int[])`,
          [
            chunk.map((r) => r.drainId), chunk.map((r) => r.orgId), lines(chunk, (r) => r.resourceJson), lines(chunk, (r) => r.recordJson),
            chunk.map((r) => r.recordId), chunk.map((r) => r.bytes), chunk.map((r) => r.scrubHits),
          ],
        );
      }
    },

    /**
     * Drains that have parked records: what the pump visits every pass. One
     * index probe per drain, never a scan of the backlog (it may hold millions).
     */
    async drainsWithBacklog(): Promise<string[]> {
      const rows = await sql.query<{ id: string }>(
        'select d.id from drains d where exists (select 1 from drain_backlog b where b.drain_id = d.id)',
      );
      return rows.map((r) => r.id);
    },

    async sizeOf(drainId: string): Promise<{ records: number; bytes: number }> {
      const rows = await sql.query<{ n: number; b: number }>(
        'select count(*)::int as n, coalesce(sum(bytes), 0)::bigint as b from drain_backlog where drain_id = $1',
        [drainId],
      );
      return { records: rows[0]?.n ?? 0, bytes: Number(rows[0]?.b ?? 0) };
    },

    /** The id of the drain's newest parked record (null: none): where a delivery round ends. */
    async lastId(drainId: string): Promise<number | null> {
      const rows = await sql.query<{ id: string | null }>('select max(id) as id from drain_backlog where drain_id = $1', [drainId]);
      const id = rows[0]?.id;
      return id === null || id === undefined ? null : Number(id);
    },

    /**
     * A page of the drain's parked records up to `upToId`, resource by resource
     * (each resource's in order), after `after` (the last row of the page
     * before): an index range scan (migration 007), never a sort of the backlog.
     */
    async byResource(drainId: string, upToId: number, after: ResourceCursor | undefined, limit: number): Promise<BacklogRow[]> {
      // The plan must walk the index in order and stop at `limit`. A table filling and emptying as
      // fast as a backlog does often has statistics that make a bitmap scan and a sort of every
      // remaining row of the drain look cheaper: 200 ms a page instead of 10 at 250,000 parked,
      // most of Postgres's time in a spilling run. Without sorts the ordered index scan is the plan.
      return sql.transaction(async (tx) => {
        await tx.query('set local enable_sort = off');
        // The first page starts below every key: the smallest bigint, before any id.
        const from = after ?? { resourceKey: '-9223372036854775808', id: 0 };
        const rows = await tx.query<RawRow>(
          `select ${ROW_COLUMNS} from drain_backlog where drain_id = $1 and id <= $2
             and (${RKEY}, id) > ($3::bigint, $4::bigint)
           order by ${RKEY}, id limit $5`,
          [drainId, upToId, from.resourceKey, from.id, limit],
        );
        return toRows(rows);
      });
    },

    async remove(ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return;
      await sql.query('delete from drain_backlog where id = any($1::bigint[])', [ids]);
    },

    /** Removes the drain's rows parked before `before`; answers their record ids, oldest first. */
    async expire(drainId: string, before: Date): Promise<{ recordIds: string[] }> {
      const rows = await sql.query<{ id: number; record_id: string }>(
        'delete from drain_backlog where drain_id = $1 and enqueued_at < $2 returning id, record_id',
        [drainId, before.toISOString()],
      );
      rows.sort((a, b) => Number(a.id) - Number(b.id));
      return { recordIds: rows.map((r) => r.record_id) };
    },

    async dropDrain(drainId: string): Promise<void> {
      await sql.query('delete from drain_backlog where drain_id = $1', [drainId]);
    },

    /** Takes or renews the drain's lease for `owner`; false when another owner holds a live one. */
    async lease(drainId: string, owner: string, ttlMs: number): Promise<boolean> {
      const rows = await sql.query(
        `insert into drain_leases (drain_id, owner, until) values ($1, $2, now() + make_interval(secs => $3::double precision / 1000))
         on conflict (drain_id) do update set owner = excluded.owner, until = excluded.until
         where drain_leases.owner = excluded.owner or drain_leases.until < now()
         returning drain_id`,
        [drainId, owner, ttlMs],
      );
      return rows.length > 0;
    },

    async release(drainId: string, owner: string): Promise<void> {
      await sql.query('delete from drain_leases where drain_id = $1 and owner = $2', [drainId, owner]);
    },

    async addUsage(rows: readonly { drainId: string; day: number; events: number; bytes: number }[]): Promise<void> {
      if (rows.length === 0) return;
      await sql.query(
        `insert into drain_daily_usage (drain_id, day, events, bytes)
         select * from unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[])
         on conflict (drain_id, day) do update set events = drain_daily_usage.events + excluded.events,
           bytes = drain_daily_usage.bytes + excluded.bytes`,
        [rows.map((r) => r.drainId), rows.map((r) => r.day), rows.map((r) => r.events), rows.map((r) => r.bytes)],
      );
    },

    /**
     * Every live drain with its backlog and its usage of `day`, for the operator gauges: one
     * query, run at scrape time.
     */
    async drainGauges(day: number): Promise<DrainGaugeRow[]> {
      const rows = await sql.query<{ id: string; org_id: string; type: string; state: string; n: number; b: number; oldest: Date | null; events: number; bytes: number }>(
        `select d.id, d.org_id, d.type, d.state, coalesce(b.n, 0)::int as n, coalesce(b.b, 0)::bigint as b, b.oldest,
                coalesce(u.events, 0)::bigint as events, coalesce(u.bytes, 0)::bigint as bytes
         from drains d
         left join (select drain_id, count(*) as n, sum(bytes) as b, min(enqueued_at) as oldest from drain_backlog group by drain_id) b
           on b.drain_id = d.id
         left join drain_daily_usage u on u.drain_id = d.id and u.day = $1
         where d.deleted_at is null`,
        [day],
      );
      return rows.map((r) => ({
        drainId: r.id, orgId: r.org_id, type: r.type, state: r.state, backlogRecords: Number(r.n), backlogBytes: Number(r.b),
        oldestParkedAt: r.oldest, usageEvents: Number(r.events), usageBytes: Number(r.bytes),
      }));
    },

    /** One drain's use on `day` (the read form asks for one drain, not the whole day's table). */
    async usageOf(drainId: string, day: number): Promise<{ events: number; bytes: number }> {
      const rows = await sql.query<{ events: number; bytes: number }>(
        'select events, bytes from drain_daily_usage where day = $1 and drain_id = $2',
        [day, drainId],
      );
      return rows[0] ? { events: Number(rows[0].events), bytes: Number(rows[0].bytes) } : { events: 0, bytes: 0 };
    },

    async usage(day: number): Promise<Map<string, { events: number; bytes: number }>> {
      const rows = await sql.query<{ drain_id: string; events: number; bytes: number }>(
        'select drain_id, events, bytes from drain_daily_usage where day = $1',
        [day],
      );
      return new Map(rows.map((r) => [r.drain_id, { events: Number(r.events), bytes: Number(r.bytes) }]));
    },
  };
}

export type BacklogRepo = ReturnType<typeof createBacklogRepo>;

/** What drainGauges answers: the per-drain gauges' figures (model/drain.ts). */
export type DrainGaugeRow = DrainGauge;
