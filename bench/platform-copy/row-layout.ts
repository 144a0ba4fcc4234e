/**
 * The platform copy's former layout, a row a record, for `bench:platform-copy` to measure the
 * pages against (pages.ts): the table as migrations 004, 015 and 018 left it (under a name of its
 * own: `agent_logs` is now a view of the pages), and the worker's rows in COPY's text format as
 * the worker built them.
 */
import type { AgentRecord } from '../../src/model/record.js';

/** The row layout: its key (org_id, ts, id), the agent index and the skill index; day partitions. */
export const ROW_TABLE = `
create table agent_log_rows (
  ts timestamptz not null, id text not null, org_id text not null, agent_id text not null, agent_name text not null,
  agent_version text, environment text not null, source text not null, event text not null, severity text not null,
  execution_id text not null, message text, trace_id text, span_id text, attributes jsonb,
  ingested_at timestamptz not null default now(),
  primary key (org_id, ts, id)
) partition by range (ts);
create index agent_log_rows_agent on agent_log_rows (org_id, agent_id, ts desc, id desc);
create index agent_log_rows_skill on agent_log_rows (org_id, agent_id, (attributes -> 'skillId'), ts desc, id desc) where source = 'skill';`;

/** The partition of the row layout for UTC day `day`. */
export const rowPartition = (day: number): string => {
  const at = (d: number) => new Date(d * 86_400_000).toISOString();
  return `create table agent_log_rows_${day} partition of agent_log_rows for values from ('${at(day)}') to ('${at(day + 1)}')`;
};

export const ROW_COPY_SQL = 'copy agent_log_rows (ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity, execution_id, message, trace_id, span_id, attributes) from stdin';

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
 * them as one (the store's copyInRows, src/store/copy-in.ts). `latin1`: rows that are byte strings already (a character a byte).
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

