/**
 * Splits an ingest body (a JSON array, or NDJSON lines) into its records
 * without parsing the body whole, and without holding it whole either: the
 * body is read a chunk at a time as it arrives (body-chunks.ts), each chunk
 * checked for UTF-8 and decoded on its own (model/utf8.ts), and a scan that
 * keeps its place across chunks finds each record's bounds and how deep it
 * nests. Only records within the bounds are parsed, each on its own. No call
 * touches the whole body, so a 16 MiB body costs many short turns of the
 * event loop rather than a few long ones (joining its chunks, decoding it
 * whole), and other requests are answered between them. A body nested
 * thousands deep (which JSON.parse turns into millions of objects before
 * anything can refuse it) costs one pass over its characters, and counting
 * stops at the record cap instead of after it.
 *
 * Bodies arrive as bytes and must be UTF-8: a decoder would turn other bytes
 * into U+FFFD and the record would be delivered as text other than was sent.
 * An NDJSON line that is not UTF-8 is that record's refusal; a JSON array
 * that is not refuses the body, as a record that is not JSON does.
 */
import { AppError } from '../../errors.js';
import { RECORD_LIMITS } from '../../model/record-limits.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { Utf8Stream } from '../../model/utf8.js';
import { slicer } from '../../event-loop.js';

export type BodyItem =
  | { kind: 'value'; value: unknown }
  | { kind: 'invalid' }
  /** Nests deeper than a record field may: refused with the field's name, never parsed. */
  | { kind: 'too_deep'; field: string }
  /** Not UTF-8: `at` is the first bad byte's offset in the record. */
  | { kind: 'not_utf8'; at: number };

/** A body's bytes as they arrive: the next chunk, or undefined once the body has ended. */
export interface BodyChunks {
  next(): Promise<Uint8Array | undefined>;
}

const tooMany = (max: number): AppError =>
  KernelErrors.PAYLOAD_TOO_LARGE(`at most ${max} records a request`, { field: 'records', max });
const notJson = (): AppError => KernelErrors.VALIDATION_FAILED('body is not valid JSON', { field: 'body' });
const notUtf8 = (at: number): AppError => KernelErrors.VALIDATION_FAILED(`body is not valid UTF-8 (byte ${at})`, { field: 'body' });

const QUOTE = 34, BACKSLASH = 92, COMMA = 44, OPEN_OBJ = 123, CLOSE_OBJ = 125, OPEN_ARR = 91, CLOSE_ARR = 93, NEWLINE = 10;
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/** Characters of one text scanned between two checks of the slice's time. */
const STEP_CHARS = 1 << 20;

/**
 * Finds records in a text given a piece at a time, keeping its place (inside a string, after a
 * backslash, how deep) from one piece to the next. `inArray`: the text is a JSON array of records
 * (depth 1 holds the records), each handed to `onItem` whole once its end is seen, with the offset
 * in its text of the top-level field it nests too deep in (-1: the record itself; -2: not too deep).
 * Otherwise the text is one record, which the caller holds: only its depth is reported, at `end()`.
 * `ok()` is false when the text is not well-formed at the level this scan reads (an array never
 * closed, text after it); the records' own syntax is JSON.parse's to judge.
 */
class RecordScanner {
  private readonly base: number; // depth of the array holding records
  private readonly fieldMax: number; // depth past which a field's value is too deep
  private depth = 0;
  private inString = false;
  /** Backslashes ending the part of the current string scanned in earlier pieces: odd escapes what follows. */
  private slashRun = 0;
  private inItem: boolean;
  /** The current record's text from earlier pieces, and its length. */
  private parts: string[] = [];
  private partsLength = 0;
  private lastKeyAt = -1; // offset in the record of the last string seen at record level: the field a nested value belongs to
  private deepAt = -2; // -2: not too deep; -1: too deep at record level; else the offset of the field's name
  private closed = false;
  private failed = false;
  private fed = 0; // characters fed before the current piece (record mode: offsets in the one record)

  constructor(
    private readonly inArray: boolean,
    private readonly onItem: (text: string, deepAt: number) => void = () => {},
  ) {
    this.base = inArray ? 1 : 0;
    this.fieldMax = this.base + 1 + RECORD_LIMITS.fieldDepth;
    this.inItem = !inArray;
  }

  get broken(): boolean {
    return this.failed;
  }

  /** Whether the text was well-formed at this scan's level; once it has all been fed. */
  ok(): boolean {
    if (this.failed) return false;
    return this.inArray ? this.closed : true;
  }

  /** The one record's depth finding (record mode): -2, -1 or the offset of the field's name. */
  get recordDeepAt(): number {
    return this.deepAt;
  }

  /** Scans the next piece of the text (a string is skipped to its closing quote with one search). */
  feed(piece: string): void {
    const { inArray, base } = this;
    const n = piece.length;
    // Where the current record's text starts in this piece: 0 when it began in an earlier one.
    let start = this.inItem ? 0 : -1;
    let i = 0;
    for (; i < n && !this.failed; i++) {
      if (this.inString) {
        const end = this.closingQuote(piece, i);
        if (end < 0) {
          i = n;
          break;
        }
        this.inString = false;
        i = end;
        continue;
      }
      const c = piece.charCodeAt(i);
      if (this.closed) {
        if (!isSpace(c)) this.failed = true;
        continue;
      }
      if (isSpace(c)) continue;
      if (inArray && this.depth === 0) {
        if (c !== OPEN_ARR) this.failed = true;
        else this.depth = 1;
        continue;
      }
      if (inArray && this.depth === base && !this.inItem && c !== COMMA && c !== CLOSE_ARR) {
        this.inItem = true;
        start = i;
      }
      if (c === QUOTE) {
        this.inString = true;
        this.slashRun = 0;
        if (this.depth === base + 1) this.lastKeyAt = this.at(start, i);
      } else if (c === OPEN_OBJ || c === OPEN_ARR) {
        this.depth++;
        if (this.depth > this.fieldMax && this.deepAt === -2) this.deepAt = this.lastKeyAt < 0 ? -1 : this.lastKeyAt;
      } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
        this.depth--;
        if (inArray && this.depth === 0) {
          if (this.inItem) this.endItem(piece, start, i);
          this.closed = true;
        }
        if (this.depth < 0) this.failed = true;
      } else if (c === COMMA && inArray && this.depth === base) {
        if (this.inItem) this.endItem(piece, start, i);
        start = -1;
      }
    }
    if (inArray && this.inItem && !this.failed && start >= 0 && start < n) {
      this.parts.push(piece.slice(start));
      this.partsLength += n - start;
    }
    this.fed += n;
  }

  /** The offset in the current record of index `i` of this piece, whose record text starts at `start`. */
  private at(start: number, i: number): number {
    return this.inArray ? this.partsLength + (i - start) : this.fed + i;
  }

  private endItem(piece: string, start: number, end: number): void {
    this.parts.push(piece.slice(start, end));
    const text = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    const deepAt = this.deepAt;
    this.parts = [];
    this.partsLength = 0;
    this.inItem = false;
    this.lastKeyAt = -1;
    this.deepAt = -2;
    this.onItem(text, deepAt);
  }

  /**
   * The index in `piece` of the quote closing the current string, scanning from `from`, or -1 when it
   * does not close in this piece. A quote preceded by an odd run of backslashes is escaped; a run that
   * reaches back to `from` continues the one that ended the string's part in earlier pieces.
   */
  private closingQuote(piece: string, from: number): number {
    const carried = this.slashRun;
    let q = piece.indexOf('"', from);
    while (q >= 0) {
      let k = q - 1;
      while (k >= from && piece.charCodeAt(k) === BACKSLASH) k--;
      const slashes = q - 1 - k + (k < from ? carried : 0);
      if (slashes % 2 === 0) return q;
      q = piece.indexOf('"', q + 1);
    }
    let k = piece.length - 1;
    while (k >= from && piece.charCodeAt(k) === BACKSLASH) k--;
    this.slashRun = piece.length - 1 - k + (k < from ? carried : 0);
    return -1;
  }
}

/** The name of the field starting at a string's opening quote (its JSON text read back, bounded). */
function fieldName(text: string, quoteAt: number): string {
  let end = quoteAt + 1;
  while (end < text.length && text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1;
  try {
    return String(JSON.parse(text.slice(quoteAt, end + 1))).slice(0, 64);
  } catch {
    return 'a field';
  }
}

/** One record's text, parsed unless it nests too deep (`deepAt`, as RecordScanner reports it). */
function item(text: string, deepAt: number): BodyItem {
  if (deepAt !== -2) return { kind: 'too_deep', field: deepAt === -1 ? 'record' : fieldName(text, deepAt) };
  try {
    return { kind: 'value', value: JSON.parse(text) };
  } catch {
    return { kind: 'invalid' };
  }
}

/** One record held whole as text (an NDJSON line, a body that is not an array): scanned in steps, then parsed. */
async function splitRecord(text: string, turn: () => Promise<void> | undefined = slicer()): Promise<BodyItem> {
  const scanner = new RecordScanner(false);
  for (let from = 0; from < text.length && !scanner.broken; from += STEP_CHARS) {
    scanner.feed(text.slice(from, from + STEP_CHARS));
    await turn();
  }
  if (!scanner.ok()) return { kind: 'invalid' };
  return item(text, scanner.recordDeepAt);
}

/**
 * A JSON array body read from its chunks: its records, each parsed on its own as soon as its end
 * has arrived. Refused whole (400, naming the first bad byte) unless its bytes are UTF-8. A body that
 * is not an array is held whole and parsed only when it nests no deeper than a record may (so that a
 * JSON object answers "must be an array" rather than "not JSON"); past `maxItems` records the read
 * stops with a 413. Each chunk and each record is one step, with turns of the event loop between
 * steps once the turn's budget is spent (`turn`, event-loop.ts). `each` is applied to every record in
 * the step that parsed it, and its result is what the body holds: a caller that keeps less than the
 * parsed value (the ingest route keeps a record's payload or its refusal) lets the value die young,
 * where holding every value until the body's end kept 15 MB of them alive through collections.
 */
export async function readJsonArrayBody<T = BodyItem>(
  chunks: BodyChunks, maxItems: number, turn = slicer(), each: (item: BodyItem) => T = (item) => item as T,
): Promise<T[] | { notArray: unknown }> {
  const utf8 = new Utf8Stream();
  const items: T[] = [];
  const texts: [string, number][] = [];
  let invalid = false;
  // A body that is not UTF-8 is refused as such wherever its bad byte is: a refusal for its records
  // (too many, an array that does not close) waits for the body's end, reading only its bytes meanwhile.
  let refusal: AppError | undefined;
  const scanner = new RecordScanner(true, (text, deepAt) => {
    if (refusal) return;
    if (items.length + texts.length >= maxItems) refusal = tooMany(maxItems);
    else texts.push([text, deepAt]);
  });
  /** Undecided until the first character that is not white space; then the text of a body that is not an array. */
  let whole: string[] | undefined;
  let isArray: boolean | undefined;
  const take = async (text: string): Promise<void> => {
    if (isArray === undefined) {
      let first = 0;
      while (first < text.length && isSpace(text.charCodeAt(first))) first++;
      if (first < text.length) {
        isArray = text.charCodeAt(first) === OPEN_ARR;
        if (!isArray) whole = [];
      }
    }
    if (whole) {
      whole.push(text);
      return;
    }
    if (refusal) return;
    scanner.feed(text);
    if (scanner.broken) refusal ??= notJson();
    for (const [recordText, deepAt] of texts) {
      // The budget is checked before a record's step, not only after it: a reader woken by a chunk
      // (in the loop's poll phase, after the turn's budget was spent in its check phase) yields
      // before parsing, where it parsed one record first. Four readers woken in one poll phase
      // each ran a record's step there, on top of the budget the check phase had used.
      await turn();
      const one = item(recordText, deepAt);
      invalid ||= one.kind === 'invalid';
      items.push(each(one));
    }
    texts.length = 0;
  };
  for (let chunk = await chunks.next(); chunk !== undefined; chunk = await chunks.next()) {
    const piece = utf8.write(chunk);
    if ('badAt' in piece) throw notUtf8(piece.badAt);
    await take(piece.text);
    await turn();
  }
  const last = utf8.end();
  if ('badAt' in last) throw notUtf8(last.badAt);
  await take(last.text);
  if (whole) {
    const one = await splitRecord(whole.join(''), turn);
    if (one.kind === 'invalid') throw notJson();
    return { notArray: one.kind === 'value' ? one.value : {} };
  }
  if (refusal) throw refusal;
  // A malformed array (or a record that is not JSON) refuses the body whole, as a JSON body. So does an
  // empty body or one of white space alone, which is not JSON either.
  if (isArray === undefined || !scanner.ok() || invalid) throw notJson();
  return items;
}

/**
 * An NDJSON body read from its chunks: one record a non-blank line, each line checked for UTF-8 and
 * decoded on its own (a newline byte is never inside a UTF-8 sequence), so a line that is not UTF-8
 * is refused alone, naming its first bad byte, and a line that is not JSON is that record's refusal.
 * `each` as for readJsonArrayBody.
 */
export async function readNdjsonBody<T = BodyItem>(
  chunks: BodyChunks, maxItems: number, turn = slicer(), each: (item: BodyItem) => T = (item) => item as T,
): Promise<T[]> {
  const utf8 = new Utf8Stream();
  const items: T[] = [];
  let line: string[] = [];
  let badAt = -1;
  const endLine = async (): Promise<void> => {
    if (badAt < 0) {
      const last = utf8.end();
      if ('badAt' in last) badAt = last.badAt;
      else line.push(last.text);
    }
    const text = badAt < 0 ? line.join('') : '';
    const at = badAt;
    line = [];
    badAt = -1;
    utf8.reset();
    if (at < 0 && text.trim() === '') return;
    if (items.length >= maxItems) throw tooMany(maxItems);
    items.push(each(at < 0 ? await splitRecord(text, turn) : { kind: 'not_utf8', at }));
  };
  for (let chunk = await chunks.next(); chunk !== undefined; chunk = await chunks.next()) {
    let from = 0;
    while (from <= chunk.length) {
      const nl = chunk.indexOf(NEWLINE, from);
      const to = nl < 0 ? chunk.length : nl;
      if (badAt < 0 && to > from) {
        const piece = utf8.write(chunk.subarray(from, to));
        if ('badAt' in piece) badAt = piece.badAt;
        else line.push(piece.text);
      }
      if (nl < 0) break;
      await endLine();
      await turn();
      from = nl + 1;
    }
    await turn();
  }
  await endLine();
  return items;
}
