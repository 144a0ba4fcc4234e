/**
 * The platform copy of agent records: batched inserts into day partitions,
 * partition upkeep (create ahead, drop past retention), and the keyset and
 * page queries of the log read routes. The logs family's, written by the
 * delivery engine: it imports only the store kernel, the model and the event
 * loop's turns, so the engine may import it (.dependency-cruiser.cjs).
 */
import type { Sql } from '../../store/sql.js';
import type { AgentRecord } from '../../model/record.js';
import { BytePieces } from '../../store/byte-pieces.js';
import { nextTurn } from '../../event-loop.js';
import { runsOf } from '../../store/runs.js';
import { DAY_MS, dayOf } from '../../model/time.js';
import { isPermanentWriteError } from '../../store/write-errors.js';
import { keysetAfter, keysetOrder, type KeysetColumn } from '../../store/keyset.js';

/** Partitions are kept ready this many days ahead (clock skew of producers). */
export const DAYS_AHEAD = 2;

const partitionName = (day: number): string => `agent_logs_${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;

/**
 * A record for the platform copy: its JSON as consumed (UTF-8 bytes or text) and its UTC day; and,
 * when the worker made it, its row in COPY's text format (copyRow), which Postgres takes instead.
 */
export interface LogCopy {
  json: string | Buffer;
  day: number;
  /** A view into a piece of packRows: rows packed together lie side by side and are written as one. */
  row?: Buffer | undefined;
  /** Or the row as bytes [rowStart, rowEnd) of a piece shared by a chunk's copies (placeRows). */
  piece?: Buffer | undefined;
  rowStart?: number;
  rowEnd?: number;
}

/** The columns of a row of copyRow, in its order. */
const COPY_COLUMNS = 'ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity, execution_id, message, trace_id, span_id, attributes';
const COPY_SQL = `copy agent_logs (${COPY_COLUMNS}) from stdin`;

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIALS = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
/** A text column of COPY's text format: backslash, tab, newline and carriage return escaped; `\N` for none. */
const copyText = (v: string | undefined): string =>
  v === undefined ? '\\N' : COPY_SPECIAL.test(v) ? v.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!) : v;
/** The same for a text known to hold none of those characters. */
const plainText = (v: string | undefined): string => v ?? '\\N';

/**
 * A validated record's row of the platform copy in COPY's text format (one line), the same values
 * the statement path stores: the time to the millisecond (`timeMs`, the validation's parse of the
 * timestamp), absent fields null, the attributes as JSON. Undefined for a record whose attributes
 * JSON cannot say again what it said (a number beyond a double, which JSON.parse made infinite):
 * such a record goes the statement path, which reads the JSON as it came.
 *
 * `plain`: the record was parsed from JSON text holding no backslash (DecodeResult), so none of
 * its strings, nor the attributes' JSON, holds a character COPY escapes (JSON writes a tab,
 * newline, carriage return or backslash inside a string only as an escape): no field is searched.
 *
 * Postgres parses a row of tab-separated text for far less than it spends taking a record out of a
 * JSON array (json_to_recordset), and COPY writes the rows to the heap in batches. The row is a
 * string, for packRows.
 */
export function copyRow(r: AgentRecord, timeMs: number, plain = false): string | undefined {
  const text = plain ? plainText : copyText;
  let attributes = '\\N';
  if (r.attributes !== undefined) {
    for (const k in r.attributes) {
      const v = r.attributes[k];
      if (typeof v === 'number' && !Number.isFinite(v)) return undefined;
    }
    attributes = text(JSON.stringify(r.attributes));
  }
  // A timestamp already in toISOString's form (UTC, milliseconds) is the time to the millisecond.
  const ts = r.timestamp.length === 24 && r.timestamp.charCodeAt(10) === 84 && r.timestamp.charCodeAt(23) === 90 ? r.timestamp : new Date(timeMs).toISOString();
  // environment, source, event, severity, traceId and spanId passed patterns that hold none of
  // COPY's special characters (validateRecord): they go as they are.
  // Joined, not concatenated: a join makes one flat string, where `+` makes a rope of some thirty
  // nodes that would outlive the young generation until the flush.
  return [
    ts, text(r.id), text(r.orgId), text(r.agentId), text(r.agentName), text(r.agentVersion),
    r.environment, r.source, r.event, r.severity, text(r.executionId),
    text(r.message), r.traceId ?? '\\N', r.spanId ?? '\\N', attributes + '\n',
  ].join('\t');
}

/** Characters of rows packed into one piece, at most (a longer row is a piece of its own). */
const ROW_PIECE_CHARS = 64 * 1024;

/**
 * The rows of a chunk of copies (copyRow's strings; undefined where a copy has none), packed into
 * pieces of about 64 KiB of UTF-8, one join and one encoding a piece; `place(i, piece, start, end)`
 * is told where row i lies. Held as strings until the flush, the rows outlived the young generation
 * and were copied by every scavenge on the way; a Buffer each cost a native call a row and a socket
 * write a row. Pieces of mostly ASCII text stay under the allocator's 128 KiB threshold for a fresh
 * mapping, whose pages fault on first write. A piece's rows lie side by side, so the COPY writes
 * them as one (byte-pieces.ts). `latin1`: rows that are byte strings already (a character a byte).
 */
function packInto(rows: readonly (string | undefined)[], place: (i: number, piece: Buffer, start: number, end: number) => void, encoding: 'utf8' | 'latin1' = 'utf8'): void {
  for (let from = 0; from < rows.length; ) {
    let to = from;
    let chars = 0;
    const texts: string[] = [];
    while (to < rows.length && (to === from || chars + (rows[to]?.length ?? 0) <= ROW_PIECE_CHARS)) {
      const row = rows[to++];
      if (row === undefined) continue;
      chars += row.length;
      texts.push(row);
    }
    const piece = Buffer.from(texts.length === 1 ? texts[0]! : texts.join(''), encoding);
    let offset = 0;
    for (let i = from; i < to; i++) {
      const row = rows[i];
      if (row === undefined) continue;
      // A row of ASCII is as long in bytes as in characters; the rare other is measured.
      const bytes = piece.length === chars ? row.length : Buffer.byteLength(row);
      place(i, piece, offset, offset + bytes);
      offset += bytes;
    }
    from = to;
  }
}

/** The rows (packInto) as views, one a row; undefined where there is no row. */
export function packRows(rows: readonly (string | undefined)[], encoding: 'utf8' | 'latin1' = 'utf8'): (Buffer | undefined)[] {
  const out = new Array<Buffer | undefined>(rows.length);
  packInto(rows, (i, piece, start, end) => (out[i] = piece.subarray(start, end)), encoding);
  return out;
}

/**
 * The rows (packInto) placed on their copies, `copies[i]` taking row i as its piece and bounds: no
 * view a row. The worker's path: a copy lives until its flush is written, and a view a record was
 * one more object on the heap for every scavenge to copy meanwhile. The COPY makes one view a run
 * of neighbouring rows (rowRuns).
 */
export function placeRows(rows: readonly (string | undefined)[], copies: LogCopy[]): void {
  packInto(rows, (i, piece, start, end) => {
    const c = copies[i]!;
    c.piece = piece;
    c.rowStart = start;
    c.rowEnd = end;
  });
}

/**
 * The copies' rows as buffers for COPY, in order: a run of neighbouring rows of one piece as one
 * view, a copy's own `row` as it is; undefined when any copy has no row.
 */
export function rowRuns(copies: readonly LogCopy[]): Buffer[] | undefined {
  const runs: Buffer[] = [];
  let piece: Buffer | undefined;
  let start = 0;
  let end = 0;
  for (const c of copies) {
    if (c.piece !== undefined && c.piece === piece && c.rowStart === end) {
      end = c.rowEnd!;
      continue;
    }
    if (piece !== undefined) runs.push(piece.subarray(start, end));
    piece = undefined;
    if (c.piece !== undefined) {
      piece = c.piece;
      start = c.rowStart!;
      end = c.rowEnd!;
    } else if (c.row !== undefined) runs.push(c.row);
    else return undefined;
  }
  if (piece !== undefined) runs.push(piece.subarray(start, end));
  return runs;
}

/** Bytes of copies one statement writes on the embedded store, at most (one copy always fits). */
const EMBEDDED_COPY_STATEMENT_BYTES = 256 * 1024;

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/** The UTC day number of an RFC 3339 time (NaN for an unparsable one, which no window holds). */
export const dayOfRecord = (timestamp: string): number => dayOf(Date.parse(timestamp));

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

function where(q: LogQuery, params: unknown[]): string {
  params.push(q.orgId);
  const parts = [`org_id = $${params.length}`];
  const add = (sqlPart: string, v: unknown) => {
    params.push(v);
    parts.push(sqlPart.replace('?', `$${params.length}`));
  };
  if (q.agentId !== undefined) add('agent_id = ?', q.agentId);
  if (q.hiddenAgents && q.hiddenAgents.length > 0) add('agent_id <> all(?::text[])', q.hiddenAgents);
  if (q.source !== undefined) add('source = ?', q.source);
  if (q.environment !== undefined) add('environment = ?', q.environment);
  if (q.since !== undefined) add('ts >= ?', q.since.toISOString());
  if (q.until !== undefined) add('ts <= ?', q.until.toISOString());
  if (q.skillId !== undefined) {
    // Written as the partial index agent_logs_skill is (migration 015): the source as a literal, so
    // the planner proves the index's predicate whatever plan it makes of the parameters, and the
    // attribute as its jsonb value compared with the id as a JSON string (a string attribute only).
    parts.push("source = 'skill'");
    add("attributes -> 'skillId' = ?::jsonb", JSON.stringify(q.skillId));
  }
  return parts.join(' and ');
}

const fromRow = (r: Record<string, unknown>): LogRow => ({
  ts: r.ts as Date,
  id: r.id as string,
  orgId: r.org_id as string,
  agentId: r.agent_id as string,
  agentName: r.agent_name as string,
  agentVersion: r.agent_version as string | null,
  environment: r.environment as string,
  source: r.source as string,
  event: r.event as string,
  severity: r.severity as string,
  executionId: r.execution_id as string,
  message: r.message as string | null,
  traceId: r.trace_id as string | null,
  spanId: r.span_id as string | null,
  attributes: r.attributes as Record<string, unknown> | null,
});

/**
 * The platform copy's keyset sort, (ts, id): newest first for the log reads, oldest first for a
 * replay's pages (whose position is the time as text to the microsecond, cast as the column's).
 */
const LOG_SORT: readonly KeysetColumn[] = [{ expr: 'ts', cast: 'timestamptz' }, { expr: 'id' }];

export function createLogsRepo(sql: Sql) {
  const ready = new Set<number>();

  async function ensurePartition(day: number): Promise<void> {
    if (ready.has(day)) return;
    const from = new Date(day * DAY_MS).toISOString();
    const to = new Date((day + 1) * DAY_MS).toISOString();
    try {
      await sql.exec(`create table if not exists ${partitionName(day)} partition of agent_logs for values from ('${from}') to ('${to}')`);
    } catch (e) {
      // Another worker created it at the same moment: fine.
      if (!/already exists/.test((e as Error).message)) throw e;
    }
    ready.add(day);
  }

  /**
   * Writes copies inside the kept window with COPY when Postgres is the store and every copy has
   * its row; returns the rows written, or undefined when they must go the statement path. COPY
   * has no `on conflict do nothing`: a copy stored before (a record read again after a crash or a
   * rebalance) fails the whole COPY, which then stores nothing, and the statement path writes the
   * run skipping what is there. Any other refusal goes that path too, which isolates and words it
   * as it always has; the rows COPY refused were not stored.
   */
  async function copyRun(copies: readonly LogCopy[]): Promise<number | undefined> {
    if (sql.copyIn === undefined) return undefined;
    const rows = rowRuns(copies);
    if (rows === undefined) return undefined;
    try {
      return await sql.copyIn(COPY_SQL, rows);
    } catch (e) {
      if (isPermanentWriteError(e)) return undefined;
      throw e;
    }
  }

  /** Writes copies inside the kept window [from, to) with one statement; returns the rows written. */
  async function insertRun(copies: readonly LogCopy[], [from, to]: readonly [string, string]): Promise<number> {
    let records: unknown;
    let recordsSql: string;
    if (sql.kind === 'postgres') {
      // `[a,b,...]` as pieces: the records' bytes are not copied (byte-pieces.ts).
      const pieces: Buffer[] = [OPEN];
      copies.forEach((c, i) => {
        if (i > 0) pieces.push(COMMA);
        pieces.push(typeof c.json === 'string' ? Buffer.from(c.json) : c.json);
      });
      pieces.push(CLOSE);
      records = new BytePieces(pieces);
      recordsSql = "convert_from($1::bytea, 'UTF8')::json";
    } else {
      // PGlite writes a bytea parameter as hex one byte a string at a time (about 100 ms a MB, on
      // this thread); text goes as it is.
      records = `[${copies.map((c) => (typeof c.json === 'string' ? c.json : c.json.toString('utf8'))).join(',')}]`;
      recordsSql = '$1::text::json';
    }
    const rows = await sql.query<{ n: number }>(
      // Times are kept to the millisecond, the precision of the keyset cursors (a finer stored
      // time would let rows slip between a cursor's millisecond and the row it was taken from).
      `with ins as (
         insert into agent_logs (ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity,
           execution_id, message, trace_id, span_id, attributes)
         select date_trunc('milliseconds', r."timestamp"), r.id, r."orgId", r."agentId", r."agentName", r."agentVersion",
           r.environment, r.source, r.event, r.severity, r."executionId", r.message, r."traceId", r."spanId", r.attributes
         from json_to_recordset(${recordsSql}) as r(id text, "orgId" text, "agentId" text, "agentName" text, "agentVersion" text,
           environment text, source text, event text, severity text, "timestamp" timestamptz, "executionId" text,
           message text, "traceId" text, "spanId" text, attributes jsonb)
         where r."timestamp" >= $2::timestamptz and r."timestamp" < $3::timestamptz
         on conflict do nothing
         returning 1)
       select count(*)::int as n from ins`,
      [records, from, to],
      { background: true },
    );
    return rows[0]?.n ?? 0;
  }

  return {
    /** Whether this store writes copies with COPY, so a copy's `row` (copyRow) is worth making. */
    takesRows: sql.copyIn !== undefined,

    /**
     * Stores records in their day partitions; duplicates (re-reads) are ignored. Records outside
     * the kept window (older than `retentionDays`, or beyond the partitions made ahead) are not
     * kept; the count of those is returned.
     */
    async insert(records: readonly AgentRecord[], retentionDays: number, nowMs = Date.now()): Promise<number> {
      const times = records.map((r) => Date.parse(r.timestamp));
      const rows = this.takesRows ? packRows(records.map((r, i) => (Number.isNaN(times[i]) ? undefined : copyRow(r, times[i]!)))) : [];
      const copies: LogCopy[] = records.map((r, i) => ({ json: JSON.stringify(r), day: dayOf(times[i]!), row: rows[i] }));
      const { outside } = await this.insertCopies(copies, retentionDays, nowMs);
      return outside;
    },

    /**
     * The worker's path: records as the JSON they arrived in, handed to Postgres as a JSON array
     * of UTF-8 bytes (json_to_recordset), so the worker spends no time building query parameters
     * nor encoding text: the consumed message bytes go to the server as they are, uncopied.
     * Returns the rows written (duplicates excluded) and the records outside the kept window.
     */
    async insertCopies(copies: readonly LogCopy[], retentionDays: number, nowMs = Date.now()): Promise<{ stored: number; outside: number }> {
      const today = Math.floor(nowMs / DAY_MS);
      const first = today - retentionDays + 1;
      const last = today + DAYS_AHEAD;
      const kept = copies.filter((c) => c.day >= first && c.day <= last);
      const outside = copies.length - kept.length;
      if (kept.length === 0) return { stored: 0, outside };
      for (const day of new Set(kept.map((c) => c.day))) await ensurePartition(day);
      const window = [new Date(first * DAY_MS).toISOString(), new Date((last + 1) * DAY_MS).toISOString()] as const;
      // The embedded store runs one statement at a time: its copies are written a bounded
      // run at a time, with turns of the event loop between (a copy that is there is ignored, so a
      // run written again after a failure stores nothing twice). Postgres takes them in one.
      if (sql.kind === 'postgres') return { stored: (await copyRun(kept)) ?? (await insertRun(kept, window)), outside };
      let stored = 0;
      for (const run of runsOf(kept, (c) => c.json.length, EMBEDDED_COPY_STATEMENT_BYTES)) {
        stored += await insertRun(run, window);
        await nextTurn();
      }
      return { stored, outside };
    },

    /** Creates the partitions of the kept window and drops those past it. */
    async maintain(retentionDays: number, nowMs = Date.now()): Promise<{ dropped: string[] }> {
      const today = Math.floor(nowMs / DAY_MS);
      for (let d = today; d <= today + DAYS_AHEAD; d++) await ensurePartition(d);
      const rows = await sql.query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
         join pg_class p on p.oid = i.inhparent where p.relname = 'agent_logs'`,
      );
      const oldest = partitionName(today - retentionDays + 1);
      const dropped: string[] = [];
      for (const { name } of rows) {
        if (/^agent_logs_\d{8}$/.test(name) && name < oldest) {
          await sql.exec(`drop table if exists ${name}`);
          dropped.push(name);
        }
      }
      for (const day of [...ready]) if (day < today - retentionDays + 1) ready.delete(day);
      return { dropped };
    },

    /** Newest first; `after` continues a keyset page. */
    async page(q: LogQuery, limit: number, opts: { after?: { at: Date; id: string } | undefined; offset?: number } = {}): Promise<LogRow[]> {
      const params: unknown[] = [];
      let w = where(q, params);
      if (opts.after) w += ` and ${keysetAfter(LOG_SORT, [opts.after.at, opts.after.id], 'desc', (v) => `$${params.push(v)}`)}`;
      params.push(limit, opts.offset ?? 0);
      const rows = await sql.query<Record<string, unknown>>(
        `select * from agent_logs where ${w} order by ${keysetOrder(LOG_SORT, 'desc')} limit $${params.length - 1} offset $${params.length}`,
        params,
      );
      return rows.map(fromRow);
    },

    /** Matches counted up to `cap` + 1, so a caller can tell "more than cap" without counting everything. */
    /**
     * A replay's page (modules/drains/tables/replays.ts): the organization's records of [since, until] after
     * `after`, oldest first in the key's order (ts, id), each with its time to the microsecond as
     * text (`tsText`), the position a replay records.
     */
    async replayPage(orgId: string, since: Date, until: Date, after: { ts: string; id: string } | null, limit: number): Promise<(LogRow & { tsText: string })[]> {
      const params: unknown[] = [orgId, since.toISOString(), until.toISOString(), limit];
      let w = 'org_id = $1 and ts >= $2 and ts <= $3';
      if (after) w += ` and ${keysetAfter(LOG_SORT, [after.ts, after.id], 'asc', (v) => `$${params.push(v)}`)}`;
      const rows = await sql.query<Record<string, unknown>>(
        `select *, to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ts_text from agent_logs where ${w} order by ${keysetOrder(LOG_SORT, 'asc')} limit $4`,
        params,
      );
      return rows.map((r) => ({ ...fromRow(r), tsText: r.ts_text as string }));
    },

    async countUpTo(q: LogQuery, cap: number): Promise<number> {
      const params: unknown[] = [];
      const w = where(q, params);
      params.push(cap + 1);
      const rows = await sql.query<{ n: number }>(
        `select count(*)::int as n from (select 1 from agent_logs where ${w} limit $${params.length}) t`,
        params,
      );
      return rows[0]?.n ?? 0;
    },
  };
}

export type LogsRepo = ReturnType<typeof createLogsRepo>;

/** What the log read routes (src/modules/logs/) are handed: the reads, never the engine's writes. */
export type LogReads = Pick<LogsRepo, 'page' | 'countUpTo'>;
