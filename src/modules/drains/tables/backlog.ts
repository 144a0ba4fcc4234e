import type { Sql } from '../../../store/sql.js';
import type { DrainGauge } from '../../../model/drain.js';
import { runsOf } from '../../../store/runs.js';
import { intArrayLiteral, textArrayLiteral } from '../../../store/array-literal.js';
import { onOneLine } from '../../../model/json-bytes.js';
import { joinable, LEGACY_BUCKET, PAGE_SEP, pageOf, placeOf, readCut, recordKey } from './backlog-pages.js';

export interface ParkedRecord {
  drainId: string;
  orgId: string;
  resourceJson: string;
  /** bucketOf(resourceJson) (backlog-pages.ts), made by the parker once per resource rather than here once per record. */
  bucket: number;
  /** The record's JSON, as text or as its UTF-8 bytes (an entry holding it so: encode/encoder.ts SerialisedEntry). */
  recordJson: string | Buffer;
  recordId: string;
  bytes: number;
  scrubHits: number;
}

/** A parked record as the pump reads it back: what a batch needs, nothing more. */
export interface BacklogRow {
  /** Its page's id and its place in the page (backlog-pages.ts recordKey). */
  id: number;
  resourceJson: string;
  recordJson: string;
  recordId: string;
  bytes: number;
  scrubHits: number;
}

/** Where a read of a round ended: the last page read, in (bucket, page id) order. */
export interface RoundCursor {
  bucket: number;
  page: number;
}

/** One read of a round: whole buckets' records in order, and where the next read starts (none: the round is read). */
export interface RoundRead {
  rows: BacklogRow[];
  next: RoundCursor | undefined;
}

interface PageRow {
  id: string; resource_json: string; record_json: string; record_ids: string[]; record_bytes: number[]; scrub_hits: number[]; done: number[];
}

/**
 * Parked records written by one statement (about half a MB of JSON text). A statement's joined
 * texts and pg's message carrying them exist at once, each the size of the statement, and outlive
 * the young generation while Postgres reads them: at 2,000 records (2 MB) a statement, a spilling
 * worker's parks were a large share of its external memory (benchmarks-engine-findings.md, memory). It also
 * bounds a page (PAGE_SLOTS).
 */
export const PARK_ROWS = 500;

/**
 * Pages whose sizes a read looks at first, and at most in all: a read looks at the next
 * FIRST_SIZES_READ pages, and at twice as many more each time its cut (readCut) could still take
 * pages beyond those, up to SIZES_READ. A spilling round of 10,000 agents takes about 250 pages of
 * 8 records: looking at 2,048 each read returned eight times the rows the cut used (Postgres read
 * and the worker parsed them: benchmarks-engine-findings.md, the backlog as pages).
 */
const FIRST_SIZES_READ = 256;
const SIZES_READ = 2048;

interface Page {
  drainId: string;
  orgId: string;
  bucket: number;
  records: ParkedRecord[];
}

/**
 * The records as pages: one per (drain, bucket) of the whole park (a flush), each page's records
 * in the order given, a page of more than PARK_ROWS records cut into pages of PARK_ROWS in order.
 * Each record comes with its resource's bucket: at thousands of agents a park holds a record or
 * two of each resource, and hashing each record's resource JSON here was most of a park's own time.
 */
function pagesOf(rows: readonly ParkedRecord[]): Page[] {
  const open = new Map<string, (Page | undefined)[]>();
  const out: Page[] = [];
  for (const r of rows) {
    const bucket = r.bucket;
    let pages = open.get(r.drainId);
    if (!pages) open.set(r.drainId, (pages = []));
    let page = pages[bucket];
    if (!page || page.records.length === PARK_ROWS) {
      pages[bucket] = page = { drainId: r.drainId, orgId: r.orgId, bucket, records: [] };
      out.push(page);
    }
    page.records.push(r);
  }
  return out;
}

/**
 * The pages' texts as UTF-8 bytes: each page's records' texts joined by newlines, the pages by
 * PAGE_SEP. Postgres takes them as they are (a text parameter in binary form is its bytes), PGlite
 * as a string. Each record's text is encoded once, into one buffer: the joined string this
 * replaced was a concatenation of thousands of pieces that pg then flattened, measured and
 * encoded, most of a park's time in the worker (the texts are about a KB a record). The buffer is
 * sized for the worst case (three bytes a UTF-16 unit) rather than measured first: measuring was a
 * pass over every text of its own, and memory the encoding does not reach is never touched.
 */
function pageBytes(pages: readonly Page[], json: (r: ParkedRecord) => string | Buffer): Buffer {
  let most = pages.length;
  for (const p of pages) for (const r of p.records) most += mostBytes(json(r)) + 1;
  const out = Buffer.allocUnsafe(most);
  let at = 0;
  for (let p = 0; p < pages.length; p++) {
    const records = pages[p]!.records;
    if (p > 0) out[at++] = PAGE_SEP_BYTE;
    for (let k = 0; k < records.length; k++) {
      if (k > 0) out[at++] = NEWLINE_BYTE;
      const text = json(records[k]!);
      if (typeof text === 'string') at += out.write(joinable(text), at, 'utf8');
      else at = joinableBytes(text, out, at);
    }
  }
  return out.subarray(0, at);
}
/** The most bytes a text takes in pageBytes's buffer: a string's at three a UTF-16 unit, bytes' their length. */
const mostBytes = (text: string | Buffer): number => (typeof text === 'string' ? text.length * 3 : text.length);

/** JSON text as bytes copied into `out` at `at` made safe to join, as joinable does to a string; answers where it ended. */
function joinableBytes(bytes: Buffer, out: Buffer, at: number): number {
  out.set(bytes, at);
  const end = at + bytes.length;
  if (bytes.indexOf(NEWLINE_BYTE) >= 0 || bytes.indexOf(PAGE_SEP_BYTE) >= 0) onOneLine(out, at, end, PAGE_SEP_BYTE);
  return end;
}
const PAGE_SEP_BYTE = PAGE_SEP.charCodeAt(0);
const NEWLINE_BYTE = 0x0a;

/** A read's pages as rows, in the pages' order, without the records a stopped round delivered already. */
function rowsOf(pages: readonly PageRow[]): BacklogRow[] {
  const rows: BacklogRow[] = [];
  for (const p of pages) {
    const page = Number(p.id);
    const resources = p.resource_json.split('\n');
    const records = p.record_json.split('\n');
    const done = p.done.length > 0 ? new Set(p.done) : undefined;
    for (let i = 0; i < records.length; i++) {
      if (done?.has(i + 1)) continue;
      rows.push({
        id: recordKey(page, i + 1), resourceJson: resources[i]!, recordJson: records[i]!, recordId: p.record_ids[i]!,
        bytes: p.record_bytes[i]!, scrubHits: p.scrub_hits[i]!,
      });
    }
  }
  return rows;
}

export function createBacklogRepo(sql: Sql) {
  /** pageBytes as a parameter: Postgres takes the bytes, PGlite a string. */
  const texts = (bytes: Buffer): Buffer | string => (sql.kind === 'postgres' ? bytes : bytes.toString('utf8'));
  return {
    /**
     * One page per (drain, bucket) of the park, the pages written in inserts of at most PARK_ROWS
     * records, in order: pages of a whole flush are bigger than pages of each statement. The
     * JSON texts, most of a page, travel as one text each, joined by newlines within a page and by
     * PAGE_SEP between pages, and are stored as joined: no escaping on either side, and Postgres
     * never splits them. The ids, sizes and scrub hits travel as flat arrays that each page slices.
     * Pages are inserted in the order of their first record, so ids keep every bucket's pages in order.
     */
    async park(rows: readonly ParkedRecord[]): Promise<void> {
      for (const pages of runsOf(pagesOf(rows), (p) => p.records.length, PARK_ROWS)) {
        const records = pages.flatMap((p) => p.records);
        const starts: number[] = [];
        let at = 0;
        for (const p of pages) {
          starts.push(at);
          at += p.records.length;
        }
        await sql.query(
          `insert into drain_backlog_pages (drain_id, org_id, bucket, records, bytes, resource_json, record_json, record_ids, record_bytes, scrub_hits)
           select p.d, p.o, p.b, p.n, p.tb, p.rj, p.rec,
                  ($9::text[])[p.s + 1 : p.s + p.n], ($10::int[])[p.s + 1 : p.s + p.n], ($11::int[])[p.s + 1 : p.s + p.n]
           from unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::bigint[],
                       string_to_array($7, E'\\x1e'), string_to_array($8, E'\\x1e'))
                with ordinality as p(d, o, b, s, n, tb, rj, rec, ord)
           order by p.ord`,
          [
            textArrayLiteral(pages.map((p) => p.drainId)), textArrayLiteral(pages.map((p) => p.orgId)),
            intArrayLiteral(pages.map((p) => p.bucket)), intArrayLiteral(starts),
            intArrayLiteral(pages.map((p) => p.records.length)), intArrayLiteral(pages.map((p) => p.records.reduce((n, r) => n + r.bytes, 0))),
            texts(pageBytes(pages, (r) => r.resourceJson)), texts(pageBytes(pages, (r) => r.recordJson)),
            textArrayLiteral(records.map((r) => r.recordId)), intArrayLiteral(records.map((r) => r.bytes)), intArrayLiteral(records.map((r) => r.scrubHits)),
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
        'select d.id from drains d where exists (select 1 from drain_backlog_pages b where b.drain_id = d.id)',
      );
      return rows.map((r) => r.id);
    },

    async sizeOf(drainId: string): Promise<{ records: number; bytes: number }> {
      const rows = await sql.query<{ n: number; b: number }>(
        'select coalesce(sum(records), 0)::int as n, coalesce(sum(bytes), 0)::bigint as b from drain_backlog_pages where drain_id = $1',
        [drainId],
      );
      return { records: rows[0]?.n ?? 0, bytes: Number(rows[0]?.b ?? 0) };
    },

    /** The id of the drain's newest page (null: none): where a delivery round ends. */
    async lastId(drainId: string): Promise<number | null> {
      const rows = await sql.query<{ id: string | null }>('select max(id) as id from drain_backlog_pages where drain_id = $1', [drainId]);
      const id = rows[0]?.id;
      return id === null || id === undefined ? null : Number(id);
    },

    /**
     * A read of a round: the drain's records in pages up to page `upTo`, bucket by bucket (each
     * bucket's pages in order), after `after`: its first bucket whole up to `cap` records, more
     * buckets up to about `budget` (backlog-pages.ts readCut), so that every resource of a bucket
     * is batched from all its records in the round. Two statements: the sizes of the next
     * SIZES_READ pages at most (an index range scan, migration 023), then the chosen pages.
     */
    async roundRead(drainId: string, upTo: number, after: RoundCursor | undefined, budget: number, cap = budget): Promise<RoundRead> {
      // The first read starts below every bucket (the legacy one is -1) and every id.
      const from = after ?? { bucket: LEGACY_BUCKET - 1, page: 0 };
      // The plan must walk the index in order and stop at the limit. A table filling and emptying
      // as fast as a backlog does often has statistics that make a bitmap scan and a sort of every
      // remaining page of the drain look cheaper; without sorts the ordered index scan is the plan.
      // The cut (readCut) of the pages seen, and whether pages past them may follow: a read that
      // took every page seen is not known to be the last unless the last look came back short.
      const { sizes, taken, more } = await sql.transaction(async (tx) => {
        await tx.query('set local enable_sort = off');
        const seen: { id: string; bucket: number; records: number }[] = [];
        for (let limit = FIRST_SIZES_READ; ; limit = Math.min(limit * 2, SIZES_READ - seen.length)) {
          const at = seen.length === 0 ? from : { bucket: seen.at(-1)!.bucket, page: Number(seen.at(-1)!.id) };
          const next = await tx.query<{ id: string; bucket: number; records: number }>(
            `select id, bucket, records from drain_backlog_pages where drain_id = $1 and id <= $2
               and (bucket, id) > ($3::int, $4::bigint)
             order by bucket, id limit $5`,
            [drainId, upTo, at.bucket, at.page, limit],
          );
          for (const row of next) seen.push(row);
          const cut = readCut(seen, budget, cap);
          // Pages after those seen would not change a cut that ends before them.
          if (cut < seen.length) return { sizes: seen, taken: cut, more: true };
          if (next.length < limit) return { sizes: seen, taken: cut, more: false };
          if (seen.length >= SIZES_READ) return { sizes: seen, taken: cut, more: true };
        }
      });
      if (taken === 0) return { rows: [], next: undefined };
      const ids = sizes.slice(0, taken).map((s) => s.id);
      const pages = await sql.query<PageRow>(
        // The arrays as JSON: parsed by JSON.parse, where an array's text form is parsed a
        // character at a time (postgres-array), which cost a spilling worker more than the page's texts.
        `select id, resource_json, record_json, array_to_json(record_ids) as record_ids, array_to_json(record_bytes) as record_bytes,
                array_to_json(scrub_hits) as scrub_hits, array_to_json(done) as done
         from drain_backlog_pages where id = any($1::bigint[])`,
        [intArrayLiteral(ids.map(Number))],
      );
      const order = new Map(ids.map((id, i) => [String(id), i]));
      pages.sort((a, b) => order.get(String(a.id))! - order.get(String(b.id))!);
      const tail = sizes[taken - 1]!;
      return { rows: rowsOf(pages), next: more ? { bucket: tail.bucket, page: Number(tail.id) } : undefined };
    },

    /**
     * The records (ids of rows read) are delivered or dropped, and their records are durable: a
     * page goes once none of its records is left, the others note which of theirs are gone.
     */
    async remove(ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return;
      await sql.query(
        `with s as (
           select u.page, array_agg(u.place) as places, count(*)::int as n
           from unnest($1::bigint[], $2::int[]) as u(page, place) group by u.page
         ), gone as (
           delete from drain_backlog_pages p using s where p.id = s.page and p.records <= s.n returning p.id
         )
         update drain_backlog_pages p
            set done = p.done || s.places, records = p.records - s.n,
                bytes = p.bytes - (select coalesce(sum(p.record_bytes[x]), 0) from unnest(s.places) as x)
           from s where p.id = s.page and p.records > s.n`,
        [intArrayLiteral(ids.map(pageOf)), intArrayLiteral(ids.map(placeOf))],
      );
    },

    /** Removes the drain's pages parked before `before`; answers their record ids not yet delivered, oldest first. */
    async expire(drainId: string, before: Date): Promise<{ recordIds: string[] }> {
      const rows = await sql.query<{ id: string; record_ids: string[]; done: number[] }>(
        'delete from drain_backlog_pages where drain_id = $1 and enqueued_at < $2 returning id, record_ids, done',
        [drainId, before.toISOString()],
      );
      rows.sort((a, b) => Number(a.id) - Number(b.id));
      const recordIds: string[] = [];
      for (const r of rows) {
        const done = new Set(r.done);
        r.record_ids.forEach((id, i) => { if (!done.has(i + 1)) recordIds.push(id); });
      }
      return { recordIds };
    },

    async dropDrain(drainId: string): Promise<void> {
      await sql.query('delete from drain_backlog_pages where drain_id = $1', [drainId]);
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
         left join (select drain_id, sum(records) as n, sum(bytes) as b, min(enqueued_at) as oldest from drain_backlog_pages group by drain_id) b
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
