/**
 * One pass over a JSON text, without parsing it, that tracks where it is:
 * the path of keys and indices from the top (`input.steps.0.with`). It finds
 * the first value nested past a bound, or names the field a character offset
 * falls in. Iterative with a stack of at most the bound, so a text nested a
 * million deep costs one pass over its characters and never the call stack:
 * the body parser refuses such a text here, before JSON.parse builds it and
 * before anything that recurses (schema validation, serialisation, the
 * idempotency fingerprint) walks it.
 *
 * The scan reads structure only; whether the text is well-formed JSON is
 * JSON.parse's to judge afterwards. On a malformed text it still ends, and
 * whatever path it names is only a best guess.
 */

const QUOTE = 34, BACKSLASH = 92, COMMA = 44, OPEN_OBJ = 123, CLOSE_OBJ = 125, OPEN_ARR = 91, CLOSE_ARR = 93;

/** A key longer than this is shown cut in a path: the path goes into an error message. */
const MAX_SEGMENT = 64;

export interface ScanResult {
  /** Keys and array indices from the top to the value found. */
  path: (string | number)[];
  /** True: the value at `path` opens a level past `maxDepth`. False: `stopAt` fell inside it. */
  tooDeep: boolean;
}

/**
 * Scans `text` until a container opens at level `maxDepth + 1` (the top value is level 1) or
 * until the character index `stopAt`. Returns where that happened, or undefined when the text
 * ended first.
 */
export function scanJson(text: string, maxDepth: number, stopAt = Infinity): ScanResult | undefined {
  // Per open level (1-based): whether it is an object, and its current key (the opening quote's
  // index) or array index.
  const isObject = new Uint8Array(maxDepth + 1);
  const at = new Int32Array(maxDepth + 1).fill(-1);
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectKey = false;
  const end = Math.min(text.length, stopAt);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) {
      inString = true;
      if (expectKey && depth > 0 && isObject[depth] === 1) at[depth] = i;
      expectKey = false;
    } else if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (depth === maxDepth) return { path: pathOf(text, depth, isObject, at), tooDeep: true };
      depth++;
      isObject[depth] = c === OPEN_OBJ ? 1 : 0;
      at[depth] = c === OPEN_OBJ ? -1 : 0;
      expectKey = c === OPEN_OBJ;
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      if (depth > 0) depth--;
      expectKey = false;
    } else if (c === COMMA && depth > 0) {
      if (isObject[depth] === 1) expectKey = true;
      else at[depth] = at[depth]! + 1;
    }
  }
  return end < text.length ? { path: pathOf(text, depth, isObject, at), tooDeep: false } : undefined;
}

/** The segments of levels 1 to `depth`: each object's current key, each array's current index. */
function pathOf(text: string, depth: number, isObject: Uint8Array, at: Int32Array): (string | number)[] {
  const path: (string | number)[] = [];
  for (let d = 1; d <= depth; d++) {
    if (isObject[d] === 0) path.push(at[d]!);
    else if (at[d]! >= 0) path.push(keyAt(text, at[d]!));
    else break; // an object before its first key: the path ends at the object
  }
  return path;
}

/** The key whose opening quote is at `quote`, decoded, cut to MAX_SEGMENT characters. */
function keyAt(text: string, quote: number): string {
  let end = quote + 1;
  while (end < text.length && text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1;
  const raw = text.slice(quote, Math.min(end + 1, quote + 1 + MAX_SEGMENT * 6 + 1));
  try {
    return String(JSON.parse(raw.endsWith('"') ? raw : `${raw}"`)).slice(0, MAX_SEGMENT);
  } catch {
    return text.slice(quote + 1, Math.min(end, quote + 1 + MAX_SEGMENT));
  }
}

/** A path as error messages write it (`input.steps.0`); `body` for the top. */
export const formatPath = (path: readonly (string | number)[]): string => (path.length === 0 ? 'body' : path.join('.'));
