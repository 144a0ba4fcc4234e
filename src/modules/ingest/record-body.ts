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

/**
 * Scans `text` from `from` to `to`. `inArray`: the range is a JSON array of records (depth 1 holds
 * the records); otherwise the range is one record. Calls `onItem` with each record's bounds and,
 * when it nests too deep, the top-level field it happened in ('' when the record itself is the
 * nesting). Returns false when the text is not well-formed at the level this scan reads (an array
 * never closed, text after it); the records' own syntax is JSON.parse's to judge.
 */
function scan(text: string, from: number, to: number, inArray: boolean, onItem: (start: number, end: number, deepAt: number) => void): boolean {
  const base = inArray ? 1 : 0; // depth of the array holding records
  const fieldMax = base + 1 + RECORD_LIMITS.fieldDepth; // depth past which a field's value is too deep
  let depth = 0;
  let inString = false;
  let escaped = false;
  let itemStart = inArray ? -1 : from;
  let lastKeyStart = -1; // the last string seen at record level: the field a nested value belongs to
  let deepAt = -2; // -2: not too deep; -1: too deep at record level; else the start of the field's name
  let closed = false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (closed) {
      if (!isSpace(c)) return false;
      continue;
    }
    if (isSpace(c)) continue;
    if (inArray && depth === 0) {
      if (c !== OPEN_ARR) return false;
      depth = 1;
      continue;
    }
    if (depth === base && itemStart < 0 && c !== COMMA && c !== CLOSE_ARR) itemStart = i;
    if (c === QUOTE) {
      inString = true;
      if (depth === base + 1) lastKeyStart = i;
    } else if (c === OPEN_OBJ || c === OPEN_ARR) {
      depth++;
      if (depth > fieldMax && deepAt === -2) deepAt = lastKeyStart < 0 ? -1 : lastKeyStart;
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      depth--;
      if (inArray && depth === 0) {
        if (itemStart >= 0) onItem(itemStart, i, deepAt);
        closed = true;
      }
      if (depth < 0) return false;
    } else if (c === COMMA && inArray && depth === base) {
      if (itemStart >= 0) onItem(itemStart, i, deepAt);
      itemStart = -1;
      lastKeyStart = -1;
      deepAt = -2;
    }
  }
  if (inArray) return closed;
  onItem(itemStart, to, deepAt);
  return true;
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
 * array" rather than "not JSON"); past `maxItems` records the scan stops with a 413.
 */
export function splitJsonArray(text: string, maxItems: number): BodyItem[] | { notArray: unknown } {
  let first = 0;
  while (first < text.length && isSpace(text.charCodeAt(first))) first++;
  if (text.charCodeAt(first) !== OPEN_ARR) {
    const one = splitNdjsonLine(text);
    if (one.kind === 'invalid') throw notJson();
    return { notArray: one.kind === 'value' ? one.value : {} };
  }
  const items: BodyItem[] = [];
  const ok = scan(text, first, text.length, true, (start, end, deepAt) => {
    if (items.length >= maxItems) throw tooMany(maxItems);
    items.push(item(text, start, end, deepAt));
  });
  // A malformed array (or a record that is not JSON) refuses the body whole, as a JSON body.
  if (!ok || items.some((i) => i.kind === 'invalid')) throw notJson();
  return items;
}

function splitNdjsonLine(line: string): BodyItem {
  let result: BodyItem = { kind: 'invalid' };
  scan(line, 0, line.length, false, (start, end, deepAt) => {
    result = item(line, start, end, deepAt);
  });
  return result;
}

/** A JSON array body's bytes: refused whole (400, naming the first bad byte) unless they are UTF-8. */
export function splitJsonArrayBody(bytes: Buffer, maxItems: number): BodyItem[] | { notArray: unknown } {
  const bad = invalidUtf8At(bytes);
  if (bad >= 0) throw KernelErrors.VALIDATION_FAILED(`body is not valid UTF-8 (byte ${bad})`, { field: 'body' });
  return splitJsonArray(bytes.toString('utf8'), maxItems);
}

/**
 * An NDJSON body's bytes. UTF-8 throughout (the common case, checked natively in one pass): split as
 * text. Otherwise line by line on the bytes (a newline byte is never inside a UTF-8 sequence), each
 * line that is not UTF-8 refused on its own.
 */
export function splitNdjsonBody(bytes: Buffer, maxItems: number): BodyItem[] {
  if (invalidUtf8At(bytes) < 0) return splitNdjson(bytes.toString('utf8'), maxItems);
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
    items.push(bad < 0 ? splitNdjsonLine(text) : { kind: 'not_utf8', at: bad });
  }
  return items;
}

/** NDJSON: one record a non-blank line; a line that is not JSON is that record's refusal. */
export function splitNdjson(text: string, maxItems: number): BodyItem[] {
  const items: BodyItem[] = [];
  let from = 0;
  while (from <= text.length) {
    let to = text.indexOf('\n', from);
    if (to < 0) to = text.length;
    const line = text.slice(from, to);
    from = to + 1;
    if (line.trim() === '') continue;
    if (items.length >= maxItems) throw tooMany(maxItems);
    items.push(splitNdjsonLine(line));
  }
  return items;
}
