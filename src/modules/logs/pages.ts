/**
 * The platform copy's pages: what a page holds and how it is written and read back, apart from
 * the store. A page is up to PAGE_RECORDS records of one organization and one UTC day (an agent
 * with many of a flush's records on pages of its own), their JSON as consumed one a line (the
 * body), a summary line each (metaLine), the page's first and last time and its keys (each agent,
 * and each agent's skill of a skill record), so that reads find the pages that can hold what they
 * select and choose from the summaries.
 *
 * Why pages: a row a record cost Postgres its heap tuple, its key and two index entries, the most
 * of what the engine and its store spent beyond a bare pass-through (docs/benchmarks-engine-findings.md, "The
 * platform copy as pages"); a page costs one tuple and its compressed texts.
 *
 * Reads answer each record once: a record read twice from the source (after a crash or a
 * rebalance, or produced twice) may lie in two pages, and is told by its (time, id), as the row
 * layout's key told it (SeenRecords).
 */
import { DAY_MS, dayOf } from '../../model/time.js';
import { jsonNumber, jsonStringMostBytes, onOneLine, writeAscii, writeJsonString } from '../../model/json-bytes.js';

/** Records a page holds at most: a read reads whole summaries and bodies, so a page is a few hundred KB at most. */
export const PAGE_RECORDS = 500;

/** A record for the platform copy, as the pipeline (or `insert`) hands it over. */
export interface LogCopy {
  /** The record's JSON as consumed (UTF-8 bytes or text). */
  json: string | Buffer;
  /** Its time in milliseconds (the validation's parse of its timestamp); NaN for none, which no window holds. */
  timeMs: number;
  id: string;
  orgId: string;
  agentId: string;
  source: string;
  environment: string;
  /** A skill record's `attributes.skillId`, when a string a read can name (SKILL_ID_MAX). */
  skillId: string | undefined;
}

/** The longest skill id the skill logs route takes (its path parameter): a longer one is no page key. */
export const SKILL_ID_MAX = 100;

/** The page key of an agent. */
export const agentKey = (agentId: string): string => `a:${agentId}`;
/** The page key of an agent's skill records (source `skill`, `attributes.skillId`). */
export const skillKey = (agentId: string, skillId: string): string => `s:${agentId}\u001f${skillId}`;

/**
 * The copy of a validated record: its JSON as consumed (or serialised), its time, and the fields
 * a page's keys and summary (metaLine) hold: the record's own strings, no new one made.
 */
export function logCopyOf(
  r: { id: string; orgId: string; agentId: string; source: string; environment: string; attributes?: Record<string, unknown> | undefined },
  json: string | Buffer,
  timeMs: number,
): LogCopy {
  const skillId = r.source === 'skill' ? r.attributes?.skillId : undefined;
  return {
    json, timeMs, id: r.id, orgId: r.orgId, agentId: r.agentId, source: r.source, environment: r.environment,
    // A skill id no read can name keys nothing (and an index entry has a bound of its own).
    skillId: typeof skillId === 'string' && skillId.length <= SKILL_ID_MAX ? skillId : undefined,
  };
}

/**
 * A record's line of its page's summary (the `meta` column): what a read selects and orders by,
 * `[ms, id, agentId, source, environment]` and the skill id of a skill record, as JSON. Reads
 * count and choose records from the summary (a tenth of the body's bytes, far less to parse) and
 * read the bodies of the pages their answer holds.
 */
export const metaLine = (c: LogCopy): string =>
  JSON.stringify(c.skillId === undefined ? [c.timeMs, c.id, c.agentId, c.source, c.environment] : [c.timeMs, c.id, c.agentId, c.source, c.environment, c.skillId]);

/** A page to write: its copies, in the order they came, and what the row says of them. */
export interface LogPage {
  orgId: string;
  day: number;
  tsMinMs: number;
  tsMaxMs: number;
  keys: string[];
  copies: LogCopy[];
}

/**
 * An agent with at least this many of a flush's records of its organization and day has pages of
 * its own: an agent's reads then read its pages and the mixed ones holding it, not every page of
 * its organization (ten busy agents: a tenth of the summaries).
 */
export const AGENT_PAGE_RECORDS = 50;

/**
 * Copies grouped into pages: by organization and day, an agent with AGENT_PAGE_RECORDS of them
 * or more on pages of its own and the others together, at most `pageRecords` a page, each page's
 * copies in the order they came.
 */
export function pagesOf(copies: readonly LogCopy[], pageRecords = PAGE_RECORDS): LogPage[] {
  // Groups in the order they were first met, found by organization then day: a key string made
  // of the two was a string a record.
  const groups: LogCopy[][] = [];
  const byOrg = new Map<string, Map<number, LogCopy[]>>();
  for (const c of copies) {
    let byDay = byOrg.get(c.orgId);
    if (byDay === undefined) byOrg.set(c.orgId, (byDay = new Map()));
    const day = dayOf(c.timeMs);
    let g = byDay.get(day);
    if (g === undefined) {
      byDay.set(day, (g = []));
      groups.push(g);
    }
    g.push(c);
  }
  const pages: LogPage[] = [];
  for (const group of groups) {
    const byAgent = new Map<string, LogCopy[]>();
    for (const c of group) {
      let a = byAgent.get(c.agentId);
      if (a === undefined) byAgent.set(c.agentId, (a = []));
      a.push(c);
    }
    let mixed = false;
    for (const a of byAgent.values()) {
      if (a.length >= AGENT_PAGE_RECORDS) pages.push(...pagesFrom(a, pageRecords));
      else mixed = true;
    }
    if (mixed) pages.push(...pagesFrom(group.filter((c) => byAgent.get(c.agentId)!.length < AGENT_PAGE_RECORDS), pageRecords));
  }
  return pages;
}

/** Copies of one organization and day as pages of at most `pageRecords`. */
function pagesFrom(copies: readonly LogCopy[], pageRecords: number): LogPage[] {
  const pages: LogPage[] = [];
  for (let i = 0; i < copies.length; i += pageRecords) {
    const page = copies.slice(i, i + pageRecords);
    let tsMinMs = Infinity;
    let tsMaxMs = -Infinity;
    const keys = new Set<string>();
    for (const c of page) {
      if (c.timeMs < tsMinMs) tsMinMs = c.timeMs;
      if (c.timeMs > tsMaxMs) tsMaxMs = c.timeMs;
      keys.add(agentKey(c.agentId));
      if (c.skillId !== undefined) keys.add(skillKey(c.agentId, c.skillId));
    }
    pages.push({ orgId: page[0]!.orgId, day: dayOf(tsMinMs), tsMinMs, tsMaxMs, keys: [...keys], copies: page });
  }
  return pages;
}

const NEWLINE = 10;

/**
 * A copy's JSON as one line: a JSON text holds a raw newline only as whitespace between tokens,
 * so a record sent pretty-printed keeps its meaning with each newline made a space.
 */
function lineOf(json: string | Buffer): Buffer {
  const b = typeof json === 'string' ? Buffer.from(json) : json;
  if (b.indexOf(NEWLINE) < 0) return b;
  const copy = Buffer.from(b);
  onOneLine(copy, 0, copy.length);
  return copy;
}

/** A page's body as text (the embedded store's statement): its lines joined by newlines. */
export function bodyText(page: LogPage): string {
  return page.copies.map((c) => lineOf(c.json).toString('utf8')).join('\n');
}

/** A page's summary (metaLine), a line a record in the body's order. */
export const metaText = (page: LogPage): string => page.copies.map(metaLine).join('\n');

/** COPY's binary format: signature, flags and header extension length; the trailer. */
const BINARY_HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
const BINARY_TRAILER = -1;
/** The columns a tuple of pagesCopyData gives, in its order. */
export const PAGE_COLUMNS = 'day, org_id, ts_min, ts_max, page, records, keys, meta, body';
const PAGE_FIELDS = 9;
const MS_2000 = Date.UTC(2000, 0, 1);
const DAYS_2000 = MS_2000 / DAY_MS;
const TEXT_OID = 25;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Bytes a page's tuple takes beside its texts: the field count, each field's length, day, times, count, the keys array's header. */
const TUPLE_FIXED_BYTES = 2 + PAGE_FIELDS * 4 + 4 + 8 + 8 + 4 + 20;
/** A summary line's bytes beside its strings' JSON: brackets, commas, the time's digits (at most 24), its newline. */
const META_FIXED_BYTES = 40;

/** The most bytes `pagesCopyData` writes for `pages` (a bound: text sized at its most, three bytes a unit, six in JSON). */
function copyDataMostBytes(pages: readonly LogPage[], ids: readonly string[]): number {
  let most = BINARY_HEADER.length + 2;
  for (let p = 0; p < pages.length; p++) {
    const page = pages[p]!;
    most += TUPLE_FIXED_BYTES + page.orgId.length * 3 + ids[p]!.length * 3;
    for (const k of page.keys) most += 4 + k.length * 3;
    for (const c of page.copies) {
      most += META_FIXED_BYTES + jsonStringMostBytes(c.id) + jsonStringMostBytes(c.agentId) + jsonStringMostBytes(c.source) + jsonStringMostBytes(c.environment);
      if (c.skillId !== undefined) most += jsonStringMostBytes(c.skillId) + 1;
      most += (typeof c.json === 'string' ? c.json.length * 3 : c.json.length) + 1;
    }
  }
  return most;
}

/**
 * Pages as the data of one `COPY ... FROM STDIN` in the binary format (PAGE_COLUMNS, `ids` the
 * pages' ids): the header, a tuple a page, the trailer, written into one buffer. Each record's
 * JSON is copied in as it was consumed and its summary line (metaLine's bytes) written where it
 * goes: writing the copies' own buffers to the socket, a newline between, made two writes a
 * record for the stream to queue and the kernel to gather, and each summary a string to join and
 * encode, more than copying a few hundred bytes costs.
 */
export function pagesCopyData(pages: readonly LogPage[], ids: readonly string[]): Buffer {
  const out = Buffer.allocUnsafe(copyDataMostBytes(pages, ids));
  out.set(BINARY_HEADER, 0);
  let at = BINARY_HEADER.length;
  for (let p = 0; p < pages.length; p++) {
    const page = pages[p]!;
    at = out.writeInt16BE(PAGE_FIELDS, at);
    at = out.writeInt32BE(4, at);
    at = out.writeInt32BE(page.day - DAYS_2000, at);
    at = textField(out, at, page.orgId);
    at = timeField(out, at, page.tsMinMs);
    at = timeField(out, at, page.tsMaxMs);
    at = textField(out, at, ids[p]!);
    at = out.writeInt32BE(4, at);
    at = out.writeInt32BE(page.copies.length, at);
    at = textArrayField(out, at, page.keys);
    at = lengthBefore(out, at, writeMeta(out, at + 4, page.copies));
    at = lengthBefore(out, at, writeBody(out, at + 4, page.copies));
  }
  at = out.writeInt16BE(BINARY_TRAILER, at);
  return out.subarray(0, at);
}

/** Writes the length of the field that starts at `at` + 4 and ends at `end` before it; answers `end`. */
function lengthBefore(out: Buffer, at: number, end: number): number {
  out.writeInt32BE(end - at - 4, at);
  return end;
}

function textField(out: Buffer, at: number, s: string): number {
  return lengthBefore(out, at, at + 4 + out.write(s, at + 4, 'utf8'));
}

/** timestamptz in binary: microseconds since 2000-01-01 UTC. */
function timeField(out: Buffer, at: number, ms: number): number {
  at = out.writeInt32BE(8, at);
  return out.writeBigInt64BE(BigInt(ms - MS_2000) * 1000n, at);
}

/** A one-dimensional text[] in binary: dimensions, null flag, element type, length, lower bound, the elements. */
function textArrayField(out: Buffer, at: number, items: readonly string[]): number {
  const start = at;
  at += 4;
  at = out.writeInt32BE(1, at);
  at = out.writeInt32BE(0, at);
  at = out.writeInt32BE(TEXT_OID, at);
  at = out.writeInt32BE(items.length, at);
  at = out.writeInt32BE(1, at);
  for (const s of items) at = textField(out, at, s);
  return lengthBefore(out, start, at);
}

/** The page's summary (metaText's bytes): metaLine of each copy, a line each. */
function writeMeta(out: Buffer, at: number, copies: readonly LogCopy[]): number {
  for (let i = 0; i < copies.length; i++) {
    const c = copies[i]!;
    if (i > 0) out[at++] = NEWLINE;
    out[at++] = OPEN_BRACKET;
    at = writeAscii(jsonNumber(c.timeMs), out, at);
    out[at++] = COMMA;
    at = writeJsonString(c.id, out, at);
    out[at++] = COMMA;
    at = writeJsonString(c.agentId, out, at);
    out[at++] = COMMA;
    at = writeJsonString(c.source, out, at);
    out[at++] = COMMA;
    at = writeJsonString(c.environment, out, at);
    if (c.skillId !== undefined) {
      out[at++] = COMMA;
      at = writeJsonString(c.skillId, out, at);
    }
    out[at++] = CLOSE_BRACKET;
  }
  return at;
}

/** The page's body (bodyText's bytes): each copy's JSON as consumed, a line each (lineOf). */
function writeBody(out: Buffer, at: number, copies: readonly LogCopy[]): number {
  for (let i = 0; i < copies.length; i++) {
    const json = copies[i]!.json;
    if (i > 0) out[at++] = NEWLINE;
    const start = at;
    if (typeof json === 'string') {
      at += out.write(json, at, 'utf8');
      if (!json.includes('\n')) continue;
    } else {
      out.set(json, at);
      at += json.length;
      if (json.indexOf(NEWLINE) < 0) continue;
    }
    onOneLine(out, start, at);
  }
  return at;
}

/** A record's place in a read's order: its time in milliseconds and its id. */
export interface RecordKey {
  ms: number;
  id: string;
}

/** A record as a page's summary (metaLine) gives it, with its line's number in the page. */
export interface MetaRecord extends RecordKey {
  agentId: string;
  source: string;
  environment: string;
  skillId: string | undefined;
  index: number;
}

/** The fields of a stored record that reads answer (its JSON as consumed, validated when it was). */
export interface StoredRecord {
  id: string;
  orgId: string;
  agentId: string;
  agentName: string;
  agentVersion?: string;
  environment: string;
  source: string;
  event: string;
  severity: string;
  timestamp: string;
  executionId: string;
  message?: string;
  traceId?: string;
  spanId?: string;
  attributes?: Record<string, unknown>;
}

/** The lines of a text, each with its number (a page's body or summary). */
export function* linesOf(text: string): Generator<[line: string, index: number]> {
  let from = 0;
  for (let index = 0; from < text.length; index++) {
    let to = text.indexOf('\n', from);
    if (to < 0) to = text.length;
    yield [text.slice(from, to), index];
    from = to + 1;
  }
}

/**
 * The records of a page's summary. With `needles`, a line that holds no backslash and lacks one of
 * them is passed over unparsed: JSON writes a string with no escape as its characters between
 * quotes, so a line without the value a read selects (`"agt_1"`) cannot hold it.
 */
export function* metaRecordsOf(meta: string, needles: readonly string[] = []): Generator<MetaRecord> {
  for (const [line, index] of linesOf(meta)) {
    const plain = !line.includes('\\');
    if (plain && needles.length > 0 && lacksAny(line, needles)) continue;
    if (plain) {
      const read = plainMeta(line, index);
      if (read !== undefined) {
        yield read;
        continue;
      }
    }
    const [ms, id, agentId, source, environment, skillId] = JSON.parse(line) as [number, string, string, string, string, string?];
    yield { ms, id, agentId, source, environment, skillId, index };
  }
}

/**
 * A summary line holding no backslash, read without JSON.parse: its strings hold no quote (JSON
 * would have escaped it), so each lies between the next two quotes. Undefined for a line not of
 * that form. A count reads every summary line its pages hold, and parsing them was most of it.
 */
function plainMeta(line: string, index: number): MetaRecord | undefined {
  const q: number[] = [];
  for (let at = line.indexOf('"'); at >= 0 && q.length < 10; at = line.indexOf('"', at + 1)) q.push(at);
  if (q.length !== 8 && q.length !== 10) return undefined;
  const ms = Number(line.slice(1, line.indexOf(',')));
  if (!Number.isFinite(ms)) return undefined;
  return {
    ms, id: line.slice(q[0]! + 1, q[1]), agentId: line.slice(q[2]! + 1, q[3]), source: line.slice(q[4]! + 1, q[5]),
    environment: line.slice(q[6]! + 1, q[7]), skillId: q.length === 10 ? line.slice(q[8]! + 1, q[9]) : undefined, index,
  };
}

/** Whether a line without escapes lacks one of the needles (so the record cannot be one that holds them all). */
function lacksAny(line: string, needles: readonly string[]): boolean {
  for (const n of needles) if (!line.includes(n)) return true;
  return false;
}

/** (ms, id) newest first: negative when a comes first. */
export const newestFirst = (a: RecordKey, b: RecordKey): number => b.ms - a.ms || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
/** (ms, id) oldest first. */
export const oldestFirst = (a: RecordKey, b: RecordKey): number => -newestFirst(a, b);

/**
 * The records seen so far, each once by (ms, id), over pages read in order of their last time
 * (newest first) or their first time (oldest first). A record beyond the current page's bound
 * (later than its last time, newest first) cannot be in it or in any page after it, so it is
 * forgotten: what is held is the records of pages that overlap in time, not all read.
 */
export class SeenRecords {
  private readonly seen = new Map<string, number>();
  private limit = 16_384;

  constructor(private readonly direction: 'newest' | 'oldest') {}

  /** True the first time (ms, id) is offered. */
  first(ms: number, id: string): boolean {
    const k = `${ms}\u0000${id}`;
    if (this.seen.has(k)) return false;
    this.seen.set(k, ms);
    return true;
  }

  /** A page bounded by `boundMs` (its last time newest first, its first time oldest first) is next. */
  passing(boundMs: number): void {
    if (this.seen.size < this.limit) return;
    for (const [k, ms] of this.seen) if (this.direction === 'newest' ? ms > boundMs : ms < boundMs) this.seen.delete(k);
    // Still large: the pages overlap that much; look again when it has doubled.
    if (this.seen.size * 2 > this.limit) this.limit = this.seen.size * 2;
  }
}
