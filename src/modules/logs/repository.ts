/**
 * The platform copy of agent records, stored as pages (pages.ts) in day partitions: the worker's
 * writes (COPY of binary tuples on Postgres, a statement a page on the embedded store), partition
 * upkeep (create ahead, drop past retention), and the reads of the log routes and of replays,
 * which decode the pages a selection can reach and answer each record once. The logs family's,
 * written by the delivery engine: it imports only the store kernel, the model and the event
 * loop's turns, so the engine may import it (.dependency-cruiser.cjs).
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../store/sql.js';
import type { AgentRecord } from '../../model/record.js';
import { nextTurn } from '../../event-loop.js';
import { DAY_MS, dayOf } from '../../model/time.js';
import {
  PAGE_COLUMNS, agentKey, bodyText, linesOf, logCopyOf, metaRecordsOf, metaText, newestFirst, oldestFirst, pagesCopyData,
  pagesOf, skillKey, SeenRecords, type LogCopy, type LogPage, type MetaRecord, type RecordKey, type StoredRecord,
} from './pages.js';

export type { LogCopy } from './pages.js';

/** Partitions are kept ready this many days ahead (clock skew of producers). */
export const DAYS_AHEAD = 2;

const partitionName = (day: number): string => `agent_log_pages_${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;

const PAGES_COPY_SQL = `copy agent_log_pages (${PAGE_COLUMNS}) from stdin (format binary)`;
const PAGE_INSERT_SQL = `insert into agent_log_pages (${PAGE_COLUMNS})
  values (date '1970-01-01' + $1::int, $2, $3::timestamptz, $4::timestamptz, $5, $6, $7::text[], $8, $9)`;

/** Pages read a statement at first; each later statement reads twice as many, up to the most. */
const FIRST_PAGES = 2;
const MOST_PAGES = 32;

export interface LogQuery {
  orgId: string;
  agentId?: string | undefined;
  /** Agents whose logs this credential may not see. */
  hiddenAgents?: readonly string[] | undefined;
  source?: string | undefined;
  environment?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** One skill's records: `source` `skill` and `attributes.skillId` equal to this string. */
  skillId?: string | undefined;
}

export interface LogRow {
  ts: Date;
  id: string;
  orgId: string;
  agentId: string;
  agentName: string;
  agentVersion: string | null;
  environment: string;
  source: string;
  event: string;
  severity: string;
  executionId: string;
  message: string | null;
  traceId: string | null;
  spanId: string | null;
  attributes: Record<string, unknown> | null;
}

/** The stored record as a read answers it: absent optional fields null, as the row layout's columns were. */
const rowOf = ({ ms, r }: { ms: number; r: StoredRecord }): LogRow => ({
  ts: new Date(ms),
  id: r.id,
  orgId: r.orgId,
  agentId: r.agentId,
  agentName: r.agentName,
  agentVersion: r.agentVersion ?? null,
  environment: r.environment,
  source: r.source,
  event: r.event,
  severity: r.severity,
  executionId: r.executionId,
  message: r.message ?? null,
  traceId: r.traceId ?? null,
  spanId: r.spanId ?? null,
  attributes: (r.attributes as Record<string, unknown> | undefined) ?? null,
});

/**
 * The records of a page's summary the query selects (its organization is the page's): the hidden
 * agents as a set and the needles made once a read, not once a page.
 */
function selectionOf(q: LogQuery): (meta: string) => Generator<MetaRecord> {
  const hidden = q.hiddenAgents && q.hiddenAgents.length > 0 ? new Set(q.hiddenAgents) : undefined;
  const needles = needlesOf(q);
  return function* (meta) {
    for (const m of metaRecordsOf(meta, needles)) if (selects(q, hidden, m)) yield m;
  };
}

/** Whether a record of a page's summary is one the query selects. */
function selects(q: LogQuery, hidden: ReadonlySet<string> | undefined, m: MetaRecord): boolean {
  if (q.agentId !== undefined && m.agentId !== q.agentId) return false;
  if (hidden !== undefined && hidden.has(m.agentId)) return false;
  if (q.source !== undefined && m.source !== q.source) return false;
  if (q.environment !== undefined && m.environment !== q.environment) return false;
  if (q.since !== undefined && m.ms < q.since.getTime()) return false;
  if (q.until !== undefined && m.ms > q.until.getTime()) return false;
  // The id as a string attribute (a number 42 is not the id "42"), as the row layout's jsonb compare was.
  if (q.skillId !== undefined && (m.source !== 'skill' || m.skillId !== q.skillId)) return false;
  return true;
}

/** Values each selected record holds as a JSON string (metaRecordsOf's needles): its agent, source, environment, skill. */
function needlesOf(q: LogQuery): string[] {
  return [q.agentId, q.source, q.environment, q.skillId].filter((v): v is string => v !== undefined).map((v) => JSON.stringify(v));
}

/** The page key every page of the query's records holds, when one does: its agent's, or its skill's. */
function keyOf(q: LogQuery): string | undefined {
  if (q.agentId === undefined) return undefined;
  return q.skillId === undefined ? agentKey(q.agentId) : skillKey(q.agentId, q.skillId);
}

/** A page as a read's first pass reads it: its bounds and summary. */
interface StoredPage {
  page: string;
  ts_min: Date;
  ts_max: Date;
  meta: string;
}

/** A record a read holds until its answer is cut: its key and where its line is. */
interface HeldRecord extends RecordKey {
  page: string;
  tsMax: Date;
  index: number;
}

/** A position among records: (time, id), after which a read goes on. */
interface Position {
  ms: number;
  id: string;
}

const isBefore = (direction: 'newest' | 'oldest', a: Position, b: Position): boolean =>
  direction === 'newest' ? a.ms > b.ms || (a.ms === b.ms && a.id > b.id) : a.ms < b.ms || (a.ms === b.ms && a.id < b.id);

/** A replay's position as stored (the time as text to the microsecond, as the row layout wrote it) in milliseconds. */
const positionMs = (ts: string): number => Math.floor(Date.parse(ts.replace(/(\.\d{3})\d+/, '$1')));
/** A time to the millisecond as a replay's position text (to the microsecond). */
const positionText = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');

/**
 * The bodies of the pages a read answered from, kept for the next read of a caller reading page
 * after page (the NDJSON export): a page's records span several answers, most of all where an
 * organization's busy agents have pages of their own, and each answer read its body again. Only
 * the last answer's pages are kept, so what is held stays a few pages.
 */
export class PageLines {
  private lines = new Map<string, string[]>();

  get(page: string): string[] | undefined {
    return this.lines.get(page);
  }

  /** The pages of the last answer, and none other. */
  keepOnly(lines: Map<string, string[]>): void {
    this.lines = lines;
  }
}

export function createLogsRepo(sql: Sql) {
  const ready = new Set<number>();

  async function ensurePartition(day: number): Promise<void> {
    if (ready.has(day)) return;
    const from = new Date(day * DAY_MS).toISOString().slice(0, 10);
    const to = new Date((day + 1) * DAY_MS).toISOString().slice(0, 10);
    const name = partitionName(day);
    try {
      await sql.exec(`create table if not exists ${name} partition of agent_log_pages for values from ('${from}') to ('${to}')`);
    } catch (e) {
      // Another worker created it at the same moment: fine.
      if (!/already exists/.test((e as Error).message)) throw e;
    }
    if (sql.kind === 'postgres') {
      // lz4 compresses a page's body and summary for a fraction of the default's CPU (pglz), the
      // body to a quarter of its size, and reads decompress them faster; a server built without it
      // keeps the default.
      await sql.exec(`alter table ${name} alter column body set compression lz4, alter column meta set compression lz4`).catch(() => {});
    }
    ready.add(day);
  }

  /** Writes pages; resolves to the records they hold. */
  async function writePages(pages: readonly LogPage[]): Promise<number> {
    let stored = 0;
    if (sql.copyIn !== undefined) {
      for (const p of pages) stored += p.copies.length;
      const data = pagesCopyData(pages, pages.map(() => randomUUID()));
      await sql.copyIn(PAGES_COPY_SQL, [data]);
      return stored;
    }
    // The embedded store runs one statement at a time: a page a statement, with a turn of the
    // event loop between.
    for (const p of pages) {
      await sql.query(PAGE_INSERT_SQL, [p.day, p.orgId, new Date(p.tsMinMs).toISOString(), new Date(p.tsMaxMs).toISOString(), randomUUID(), p.copies.length, p.keys, metaText(p), bodyText(p)], { background: true });
      stored += p.copies.length;
      await nextTurn();
    }
    return stored;
  }

  /**
   * The pages that can hold the query's records, in the read's order (newest: by last time,
   * descending; oldest: by first time), a statement at a time from `after` on.
   */
  async function* pagesFor(q: LogQuery, direction: 'newest' | 'oldest', bound: Position | undefined, first = FIRST_PAGES): AsyncGenerator<StoredPage & { boundMs: number }> {
    const params: unknown[] = [q.orgId];
    const parts = ['org_id = $1'];
    const add = (part: string, v: unknown) => {
      params.push(v);
      parts.push(part.replaceAll('?', `$${params.length}`));
    };
    const key = keyOf(q);
    if (key !== undefined) add('keys @> array[?::text]', key);
    // A page's records are all of its day: the days prune partitions, the times pages.
    if (q.since !== undefined) {
      add('ts_max >= ?::timestamptz', q.since.toISOString());
      add("day >= date '1970-01-01' + ?::int", dayOf(q.since.getTime()));
    }
    if (q.until !== undefined) {
      add('ts_min <= ?::timestamptz', q.until.toISOString());
      add("day <= date '1970-01-01' + ?::int", dayOf(q.until.getTime()));
    }
    if (bound !== undefined) add(direction === 'newest' ? 'ts_min <= ?::timestamptz' : 'ts_max >= ?::timestamptz', new Date(bound.ms).toISOString());
    const [column, order, cmp] = direction === 'newest' ? ['ts_max', 'desc', '<'] : ['ts_min', 'asc', '>'];
    let last: { at: Date; page: string } | undefined;
    for (let n = first; ; n = Math.min(n * 2, MOST_PAGES)) {
      const p = [...params];
      let w = parts.join(' and ');
      if (last !== undefined) {
        p.push(last.at.toISOString(), last.page);
        w += ` and (${column}, page) ${cmp} ($${p.length - 1}::timestamptz, $${p.length})`;
      }
      p.push(n);
      const rows = await sql.query<StoredPage>(
        `select page, ts_min, ts_max, meta from agent_log_pages where ${w} order by ${column} ${order}, page ${order} limit $${p.length}`,
        p,
        { background: true },
      );
      for (const r of rows) yield { ...r, boundMs: (direction === 'newest' ? r.ts_max : r.ts_min).getTime() };
      if (rows.length < n) return;
      const end = rows.at(-1)!;
      last = { at: direction === 'newest' ? end.ts_max : end.ts_min, page: end.page };
    }
  }

  /**
   * The first `want` records the query selects in the read's order, after `bound` when given, each
   * once. Pages come in the order of their bound (pagesFor): once `want` records are held that all
   * come before the next page's bound, no later page can hold one that comes earlier.
   */
  async function firstRecords(q: LogQuery, direction: 'newest' | 'oldest', want: number, bound: Position | undefined): Promise<HeldRecord[]> {
    const selected = selectionOf(q);
    const order = direction === 'newest' ? newestFirst : oldestFirst;
    const seen = new SeenRecords(direction);
    let held: HeldRecord[] = [];
    let sorted = true;
    const trim = () => {
      if (!sorted) held.sort(order);
      sorted = true;
      if (held.length > want) held = held.slice(0, want);
    };
    for await (const page of pagesFor(q, direction, bound)) {
      if (held.length >= want) {
        trim();
        const edge = held[want - 1]!;
        if (direction === 'newest' ? edge.ms > page.boundMs : edge.ms < page.boundMs) break;
      }
      seen.passing(page.boundMs);
      for (const rec of selected(page.meta)) {
        if (bound !== undefined && !isBefore(direction, bound, rec)) continue;
        if (!seen.first(rec.ms, rec.id)) continue;
        held.push({ ms: rec.ms, id: rec.id, page: page.page, tsMax: page.ts_max, index: rec.index });
        sorted = false;
      }
      if (held.length > 2 * want + 1000) trim();
    }
    trim();
    return held;
  }

  /**
   * The rows of held records, in their order: each page's body read once (the pages of the answer
   * alone, those `kept` holds not again), each record's line parsed.
   */
  async function rowsOf(orgId: string, held: readonly HeldRecord[], kept?: PageLines): Promise<LogRow[]> {
    if (held.length === 0) return [];
    const lines = new Map<string, string[]>();
    const pages = new Map<string, Date>();
    for (const h of held) {
      const known = kept?.get(h.page);
      if (known !== undefined) lines.set(h.page, known);
      else pages.set(h.page, h.tsMax);
    }
    // By the newest-pages index (organization, last time, page) and the day partitions.
    const rows = pages.size === 0 ? [] : await sql.query<{ page: string; body: string }>(
      `select page, body from agent_log_pages where org_id = $1 and ts_max = any($2::timestamptz[]) and page = any($3::text[])
         and day = any($4::date[])`,
      [orgId, [...new Set([...pages.values()].map((d) => d.toISOString()))], [...pages.keys()],
        [...new Set([...pages.values()].map((d) => d.toISOString().slice(0, 10)))]],
      { background: true },
    );
    for (const r of rows) lines.set(r.page, [...linesOf(r.body)].map(([line]) => line));
    kept?.keepOnly(lines);
    return held.map((h) => {
      const line = lines.get(h.page)?.[h.index];
      // A page dropped by retention between the two statements: its records are gone.
      if (line === undefined) return undefined;
      return rowOf({ ms: h.ms, r: JSON.parse(line) as StoredRecord });
    }).filter((r): r is LogRow => r !== undefined);
  }

  return {
    /**
     * Stores records in their day partitions. Records outside the kept window (older than
     * `retentionDays`, or beyond the partitions made ahead) are not kept; the count of those is
     * returned.
     */
    async insert(records: readonly AgentRecord[], retentionDays: number, nowMs = Date.now()): Promise<number> {
      const copies = records.map((r) => logCopyOf(r, JSON.stringify(r), Date.parse(r.timestamp)));
      const { outside } = await this.insertCopies(copies, retentionDays, nowMs);
      return outside;
    },

    /**
     * The worker's path: records as the JSON they arrived in, grouped into pages (pages.ts) and
     * written in one COPY on Postgres, the consumed bytes going to the server as they are. A
     * record read again (after a crash or a rebalance) may be written again: reads answer it once.
     * Returns the records written and those outside the kept window.
     */
    async insertCopies(copies: readonly LogCopy[], retentionDays: number, nowMs = Date.now()): Promise<{ stored: number; outside: number }> {
      const today = Math.floor(nowMs / DAY_MS);
      const first = today - retentionDays + 1;
      const last = today + DAYS_AHEAD;
      const kept = copies.filter((c) => {
        const day = dayOf(c.timeMs);
        return day >= first && day <= last;
      });
      const outside = copies.length - kept.length;
      if (kept.length === 0) return { stored: 0, outside };
      const pages = pagesOf(kept);
      for (const day of new Set(pages.map((p) => p.day))) await ensurePartition(day);
      return { stored: await writePages(pages), outside };
    },

    /** Creates the partitions of the kept window and drops those past it. */
    async maintain(retentionDays: number, nowMs = Date.now()): Promise<{ dropped: string[] }> {
      const today = Math.floor(nowMs / DAY_MS);
      for (let d = today; d <= today + DAYS_AHEAD; d++) await ensurePartition(d);
      const rows = await sql.query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
         join pg_class p on p.oid = i.inhparent where p.relname = 'agent_log_pages'`,
      );
      const oldest = partitionName(today - retentionDays + 1);
      const dropped: string[] = [];
      for (const { name } of rows) {
        if (/^agent_log_pages_\d{8}$/.test(name) && name < oldest) {
          await sql.exec(`drop table if exists ${name}`);
          dropped.push(name);
        }
      }
      for (const day of [...ready]) if (day < today - retentionDays + 1) ready.delete(day);
      return { dropped };
    },

    /**
     * Newest first by (time, id); `after` continues a keyset page, `offset` skips that many.
     * `lines`: the bodies a caller reading page after page keeps between them (PageLines).
     */
    async page(q: LogQuery, limit: number, opts: { after?: { at: Date; id: string } | undefined; offset?: number; lines?: PageLines } = {}): Promise<LogRow[]> {
      const offset = opts.offset ?? 0;
      const bound = opts.after ? { ms: opts.after.at.getTime(), id: opts.after.id } : undefined;
      const records = await firstRecords(q, 'newest', offset + limit, bound);
      return rowsOf(q.orgId, records.slice(offset), opts.lines);
    },

    /**
     * A replay's page (modules/drains/tables/replays.ts): the organization's records of [since, until] after
     * `after`, oldest first by (time, id), each with its time to the microsecond as text
     * (`tsText`), the position a replay records.
     */
    async replayPage(orgId: string, since: Date, until: Date, after: { ts: string; id: string } | null, limit: number): Promise<(LogRow & { tsText: string })[]> {
      const bound = after ? { ms: positionMs(after.ts), id: after.id } : undefined;
      const records = await firstRecords({ orgId, since, until }, 'oldest', limit, bound);
      return (await rowsOf(orgId, records)).map((r) => ({ ...r, tsText: positionText(r.ts.getTime()) }));
    },

    /** Matches counted up to `cap` + 1, so a caller can tell "more than cap" without counting everything. */
    async countUpTo(q: LogQuery, cap: number): Promise<number> {
      const selected = selectionOf(q);
      const seen = new SeenRecords('newest');
      let n = 0;
      // A count reads pages until its cap: many at a time from the start (a summary is small).
      for await (const page of pagesFor(q, 'newest', undefined, MOST_PAGES / 2)) {
        seen.passing(page.boundMs);
        for (const rec of selected(page.meta)) {
          if (!seen.first(rec.ms, rec.id)) continue;
          if (++n > cap) return n;
        }
      }
      return n;
    },
  };
}

export type LogsRepo = ReturnType<typeof createLogsRepo>;

/** What the log read routes (src/modules/logs/) are handed: the reads, never the engine's writes. */
export type LogReads = Pick<LogsRepo, 'page' | 'countUpTo'>;
