/**
 * The API's JSON body parser, in place of fastify's, for every route that
 * takes `application/json` (the ingest route splits its own bodies). A body
 * is refused, before anything else reads it, when:
 *
 * - its Content-Type names a charset other than UTF-8 (415): the body is
 *   read as UTF-8 whatever it says, so UTF-16 would be read as other text;
 * - its bytes are not UTF-8 (400 naming the field they fall in): decoded,
 *   they would become U+FFFD and be stored as text other than was sent;
 * - it nests deeper than MAX_BODY_DEPTH levels (400 naming the field): the
 *   depth is measured on the text in one iterative pass (json-scan.ts), so a
 *   body nested thousands deep is never parsed, validated, fingerprinted for
 *   its idempotency key or serialised, any of which recurses;
 * - it holds a `__proto__` key, or a `constructor` key holding `prototype`,
 *   at any depth (400 naming the key): a merge or copy of it could reach an
 *   object's prototype.
 *
 * Each 400 is a schema failure of the body, so it answers in the route's
 * family shape, through the route's own validation answer where it has one.
 * Only `application/json` is read: fastify's `text/plain` parser is removed,
 * so a body of another type answers 415 on every route.
 */
import { errorCodes, type FastifyInstance } from 'fastify';
import { invalidUtf8At } from '../../model/utf8.js';
import { formatPath, scanJson } from './json-scan.js';
import { SchemaValidationError } from './schema.js';
import { requireUtf8Charset } from './charset.js';

/**
 * The deepest a request body may nest: the body's own object is level 1, so its fields' values may
 * nest 63 levels. Free-form fields (a workflow's `input`, `stateSeed` and inline `graph`, a voice
 * config's `llm.options`, a dispatch's `context`) are the deepest any route takes, and need a
 * handful of levels; this is far past them and far below what recursion over the value can take.
 */
export const MAX_BODY_DEPTH = 64;

const bodyIssue = (path: readonly (string | number)[], constraint: string, message: string): SchemaValidationError =>
  new SchemaValidationError([{ part: 'body', path: formatPath(path), constraint, message }]);

/** Whether a text may hold a `__proto__` or `constructor` key (either written with \u escapes): most bodies hold neither. */
const PROTO_KEY = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"/;
const CONSTRUCTOR_KEY = /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"/;

/** The path of the first key that could reach a prototype (`__proto__`, `constructor.prototype`), if any. */
export function prototypeKeyPath(value: unknown): (string | number)[] | undefined {
  // Iterative, though the depth is bounded by now: the same walk whatever calls it.
  const pending: [unknown, (string | number)[]][] = [[value, []]];
  while (pending.length > 0) {
    const [v, path] = pending.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) pending.push([v[i], [...path, i]]);
      continue;
    }
    if (Object.hasOwn(v, '__proto__')) return [...path, '__proto__'];
    const o = v as Record<string, unknown>;
    const ctor = Object.hasOwn(o, 'constructor') ? o.constructor : undefined;
    if (typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) return [...path, 'constructor', 'prototype'];
    const keys = Object.keys(o);
    for (let i = keys.length - 1; i >= 0; i--) pending.push([o[keys[i]!], [...path, keys[i]!]]);
  }
  return undefined;
}

/** Reads a JSON body's bytes; throws what the module comment lists. */
export function parseJsonBody(bytes: Buffer, contentType: string | undefined): unknown {
  requireUtf8Charset(contentType);
  if (bytes.length === 0) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  const bad = invalidUtf8At(bytes);
  let text = bytes.toString('utf8');
  if (bad >= 0) {
    // The bytes before the first bad one are UTF-8: their text's length is where it falls in the text.
    const at = scanJson(text, MAX_BODY_DEPTH, bytes.subarray(0, bad).toString('utf8').length);
    const path = at?.path ?? [];
    throw bodyIssue(path, 'utf8', `${formatPath(path)} is not valid UTF-8 (byte ${bad} of the body)`);
  }
  // A byte order mark is not part of the JSON text.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const deep = scanJson(text, MAX_BODY_DEPTH);
  if (deep) throw bodyIssue(deep.path, 'maxDepth', `${formatPath(deep.path)} nests deeper than ${MAX_BODY_DEPTH} levels (the body's own included)`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
  if (PROTO_KEY.test(text) || CONSTRUCTOR_KEY.test(text)) {
    const path = prototypeKeyPath(value);
    if (path) throw bodyIssue(path, 'forbiddenKey', `${formatPath(path)} is not allowed: a body may not hold a key that reaches an object's prototype`);
  }
  return value;
}

/** Installs the parser on the root instance: every route of every family reads JSON through it. */
export function installJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer, req.headers['content-type']));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
}
