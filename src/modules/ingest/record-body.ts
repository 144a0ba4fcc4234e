/**
 * Splits an ingest body (a JSON array, or NDJSON lines) into its records
 * without parsing the body whole. One scan over the text finds each record's
 * bounds and how deep it nests; only records within the bounds are parsed,
 * each on its own. A body nested thousands deep (which JSON.parse turns into
 * millions of objects before anything can refuse it) costs one pass over its
 * characters, and counting stops at the record cap instead of after it.
 *
 * Bodies arrive as bytes and must be UTF-8: a decoder would turn other bytes
 * into U+FFFD and the record would be delivered as text other than was sent.
 * An NDJSON line that is not UTF-8 is that record's refusal; a JSON array
 * that is not refuses the body, as a record that is not JSON does.
 */
import { AppError } from '../../errors.js';
import { RECORD_LIMITS } from '../../model/record-limits.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { invalidUtf8At } from '../../model/utf8.js';
import { slicer } from '../../event-loop.js';

export type BodyItem =
  | { kind: 'value'; value: unknown }
  | { kind: 'invalid' }
  /** Nests deeper than a record field may: refused with the field's name, never parsed. */
  | { kind: 'too_deep'; field: string }
  /** Not UTF-8: `at` is the first bad byte's offset in the record. */
  | { kind: 'not_utf8'; at: number };

const tooMany = (max: number): AppError =>
  KernelErrors.PAYLOAD_TOO_LARGE(`at most ${max} records a request`, { field: 'records', max });
const notJson = (): AppError => KernelErrors.VALIDATION_FAILED('body is not valid JSON', { field: 'body' });

const QUOTE = 34, BACKSLASH = 92, COMMA = 44, OPEN_OBJ = 123, CLOSE_OBJ = 125, OPEN_ARR = 91, CLOSE_ARR = 93;
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/** Characters scanned between two checks of the slice's time. */
const STEP_CHARS = 1 << 20;

/**
 * Scans `text` from `from` to `to`, a step at a time (`step`), so that a 16 MiB body is read in
 * slices between which the event loop turns. `inArray`: the range is a JSON array of records
 * (depth 1 holds the records); otherwise the range is one record. Calls `onItem` with each
 * record's bounds and, when it nests too deep, the top-level field it happened in ('' when the
 * record itself is the nesting). `ok()` is false when the text is not well-formed at the level this
 * scan reads (an array never closed, text after it); the records' own syntax is JSON.parse's to judge.
 */
class Scanner {
  private readonly base: number; // depth of the array holding records
  private readonly fieldMax: number; // depth past which a field's value is too deep
  private depth = 0;
  private inString = false;
  private itemStart: number;
  private lastKeyStart = -1; // the last string seen at record level: the field a nested value belongs to
  private deepAt = -2; // -2: not too deep; -1: too deep at record level; else the start of the field's name
  private closed = false;
  private failed = false;
  private i: number;

  constructor(
    private readonly text: string,
    from: number,
    private readonly to: number,
    private readonly inArray: boolean,
    private readonly onItem: (start: number, end: number, deepAt: number) => void,
  ) {
    this.base = inArray ? 1 : 0;
    this.fieldMax = this.base + 1 + RECORD_LIMITS.fieldDepth;
    this.itemStart = inArray ? -1 : from;
    this.i = from;
  }

  get done(): boolean {
    return this.failed || this.i >= this.to;
  }

  /** Whether the range was well-formed; once `done`. */
  ok(): boolean {
    if (this.failed) return false;
    return this.inArray ? this.closed : true;
  }

  /** Scans about `chars` more characters (a string is skipped whole); at the end, reports the last item. */
  step(chars = STEP_CHARS): void {
    const { text, to, inArray, base } = this;
    const stop = Math.min(to, this.i + chars);
    let i = this.i;
    for (; i < stop; i++) {
      if (this.inString) {
        // A string is skipped to its closing quote at native speed: a 240 KB message is one search.
        const end = closingQuote(text, i, to);
        if (end < 0) {
          i = to;
          break;
        }
        this.inString = false;
        i = end;
        continue;
      }
      const c = text.charCodeAt(i);
      if (this.closed) {
        if (!isSpace(c)) {
          this.failed = true;
          break;
        }
        continue;
      }
      if (isSpace(c)) continue;
      if (inArray && this.depth === 0) {
        if (c !== OPEN_ARR) {
          this.failed = true;
          break;
        }
        this.depth = 1;
        continue;
      }
      if (this.depth === base && this.itemStart < 0 && c !== COMMA && c !== CLOSE_ARR) this.itemStart = i;
      if (c === QUOTE) {
        this.inString = true;
        if (this.depth === base + 1) this.lastKeyStart = i;
      } else if (c === OPEN_OBJ || c === OPEN_ARR) {
        this.depth++;
        if (this.depth > this.fieldMax && this.deepAt === -2) this.deepAt = this.lastKeyStart < 0 ? -1 : this.lastKeyStart;
      } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
        this.depth--;
        if (inArray && this.depth === 0) {
          if (this.itemStart >= 0) this.onItem(this.itemStart, i, this.deepAt);
          this.closed = true;
        }
        if (this.depth < 0) {
          this.failed = true;
          break;
        }
      } else if (c === COMMA && inArray && this.depth === base) {
        if (this.itemStart >= 0) this.onItem(this.itemStart, i, this.deepAt);
        this.itemStart = -1;
        this.lastKeyStart = -1;
        this.deepAt = -2;
      }
    }
    this.i = i;
    if (!this.failed && i >= to && !inArray) this.onItem(this.itemStart, to, this.deepAt);
  }
}

/**
 * The index of the quote closing a string whose text starts at `from` (after its opening quote),
 * or -1 when it does not close before `to`. A quote preceded by an odd run of backslashes is
 * escaped; each run is counted once, so the search stays linear.
 */
function closingQuote(text: string, from: number, to: number): number {
  let q = text.indexOf('"', from);
  while (q >= 0 && q < to) {
    let slashes = 0;
    for (let k = q - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
  return -1;
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

function item(text: string, start: number, end: number, deepAt: number): BodyItem {
  if (deepAt !== -2) return { kind: 'too_deep', field: deepAt === -1 ? 'record' : fieldName(text, deepAt) };
  try {
    return { kind: 'value', value: JSON.parse(text.slice(start, end)) };
  } catch {
    return { kind: 'invalid' };
  }
}

/**
 * A JSON array body: its records, each parsed on its own. A body that is not an array is parsed
 * whole only when it nests no deeper than a record may (so that a JSON object answers "must be an
 * array" rather than "not JSON"); past `maxItems` records the scan stops with a 413. The scan and
 * the parses run in slices with turns of the event loop between them (`turn`, event-loop.ts).
 */
export async function splitJsonArray(text: string, maxItems: number, turn = slicer()): Promise<BodyItem[] | { notArray: unknown }> {
  let first = 0;
  while (first < text.length && isSpace(text.charCodeAt(first))) first++;
  if (text.charCodeAt(first) !== OPEN_ARR) {
    const one = await splitNdjsonLine(text, turn);
    if (one.kind === 'invalid') throw notJson();
    return { notArray: one.kind === 'value' ? one.value : {} };
  }
  const items: BodyItem[] = [];
  let invalid = false;
  const bounds: [number, number, number][] = [];
  const scanner = new Scanner(text, first, text.length, true, (start, end, deepAt) => {
    if (items.length + bounds.length >= maxItems) throw tooMany(maxItems);
    bounds.push([start, end, deepAt]);
  });
  while (!scanner.done) {
    scanner.step();
    for (const [start, end, deepAt] of bounds) {
      const one = item(text, start, end, deepAt);
      invalid ||= one.kind === 'invalid';
      items.push(one);
      await turn();
    }
    bounds.length = 0;
    await turn();
  }
  // A malformed array (or a record that is not JSON) refuses the body whole, as a JSON body.
  if (!scanner.ok() || invalid) throw notJson();
  return items;
}

async function splitNdjsonLine(line: string, turn: () => Promise<void> | undefined): Promise<BodyItem> {
  let bounds: [number, number, number] | undefined;
  const scanner = new Scanner(line, 0, line.length, false, (start, end, deepAt) => {
    bounds = [start, end, deepAt];
  });
  while (!scanner.done) {
    scanner.step();
    await turn();
  }
  return bounds ? item(line, ...bounds) : { kind: 'invalid' };
}

/** A JSON array body's bytes: refused whole (400, naming the first bad byte) unless they are UTF-8. */
export async function splitJsonArrayBody(bytes: Buffer, maxItems: number, turn = slicer()): Promise<BodyItem[] | { notArray: unknown }> {
  const bad = invalidUtf8At(bytes);
  if (bad >= 0) throw KernelErrors.VALIDATION_FAILED(`body is not valid UTF-8 (byte ${bad})`, { field: 'body' });
  return splitJsonArray(bytes.toString('utf8'), maxItems, turn);
}

/**
 * An NDJSON body's bytes. UTF-8 throughout (the common case, checked natively in one pass): split as
 * text. Otherwise line by line on the bytes (a newline byte is never inside a UTF-8 sequence), each
 * line that is not UTF-8 refused on its own.
 */
export async function splitNdjsonBody(bytes: Buffer, maxItems: number, turn = slicer()): Promise<BodyItem[]> {
  if (invalidUtf8At(bytes) < 0) return splitNdjson(bytes.toString('utf8'), maxItems, turn);
  const items: BodyItem[] = [];
  let from = 0;
  while (from <= bytes.length) {
    let to = bytes.indexOf(0x0a, from);
    if (to < 0) to = bytes.length;
    const line = bytes.subarray(from, to);
    from = to + 1;
    const bad = invalidUtf8At(line);
    const text = bad < 0 ? line.toString('utf8') : '';
    if (bad < 0 && text.trim() === '') continue;
    if (items.length >= maxItems) throw tooMany(maxItems);
    items.push(bad < 0 ? await splitNdjsonLine(text, turn) : { kind: 'not_utf8', at: bad });
    await turn();
  }
  return items;
}

/** NDJSON: one record a non-blank line; a line that is not JSON is that record's refusal. */
export async function splitNdjson(text: string, maxItems: number, turn = slicer()): Promise<BodyItem[]> {
  const items: BodyItem[] = [];
  let from = 0;
  while (from <= text.length) {
    let to = text.indexOf('\n', from);
    if (to < 0) to = text.length;
    const line = text.slice(from, to);
    from = to + 1;
    if (line.trim() === '') continue;
    if (items.length >= maxItems) throw tooMany(maxItems);
    items.push(await splitNdjsonLine(line, turn));
    await turn();
  }
  return items;
}
