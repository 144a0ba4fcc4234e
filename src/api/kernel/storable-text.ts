/**
 * Text the store cannot hold, refused on every route: Postgres text and jsonb take no NUL character
 * and no half of a UTF-16 surrogate pair (jsonb refuses the write, text keeps it altered as U+FFFD).
 * Every string and key of a request's parsed body, query parameters and path parameters is looked
 * at once its schema has accepted it (so the schema's own, more precise rules answer first) and
 * before the handler runs, so nothing has been written, spent or sent when it is refused: a 400 in
 * the route's words and shape (its `validationError`), naming the field.
 *
 * A path parameter can carry NUL (`%00`) but not a lone surrogate: percent-decoding yields U+FFFD
 * or fails. A body is looked at where the route describes one (schema.ts has every route that
 * reads its body describe it), so a route that ignores its body is not refused for what it would
 * not read; a route whose own parser answers such text itself (record by record on the ingest
 * route) says so in `ownTextRule`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LONE_SURROGATE } from '../../model/record.js';
import { SchemaValidationError, type RequestPart, type SchemaIssue } from './schema.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Why the kernel does not refuse this route's body for text the store cannot hold: its own parser answers it. */
    ownTextRule?: string;
  }
}

/** The constraint a refusal of unstorable text carries (a family's mapper may tell it apart). */
export const UNSTORABLE_TEXT = 'storable';

const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`);

interface Node {
  value: unknown;
  parent: Node | undefined;
  key: string;
}

const segmentsOf = (node: Node | undefined): string[] => {
  const out: string[] = [];
  for (let n = node; n?.parent !== undefined; n = n.parent) out.push(n.key);
  return out.reverse();
};

/**
 * Where `value` first holds unstorable text, in document order: the path of the string (`input.day`,
 * `items.0.name`), or of the object whose key holds it (`inKey`); undefined when it holds none.
 * Iterative: a body may nest deeper than the stack.
 */
export function unstorableTextIn(value: unknown): { path: string[]; inKey: boolean } | undefined {
  const pending: Node[] = [{ value, parent: undefined, key: '' }];
  while (pending.length > 0) {
    const node = pending.pop()!;
    const v = node.value;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) return { path: segmentsOf(node), inKey: false };
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (const k of keys) if (UNSTORABLE.test(k)) return { path: segmentsOf(node), inKey: true };
      // Pushed last to first, so the first field is looked at first.
      for (let i = keys.length - 1; i >= 0; i--) pending.push({ value: (v as Record<string, unknown>)[keys[i]!], parent: node, key: keys[i]! });
    }
  }
  return undefined;
}

/** The issue naming where `value` (a request's `part`) holds unstorable text, if it does. */
export function unstorableIssue(part: RequestPart, value: unknown): SchemaIssue | undefined {
  const found = unstorableTextIn(value);
  if (!found) return undefined;
  const at = found.path.join('.');
  const name = at || part;
  const message = found.inKey
    ? `${name} must not hold a key with NUL characters or unpaired surrogates`
    : `${name} must not contain NUL characters or unpaired surrogates`;
  return { part, path: name, constraint: UNSTORABLE_TEXT, message };
}

/** The parts of a request the rule looks at, as the route reads them. */
function partsOf(req: FastifyRequest): [RequestPart, unknown][] {
  const parts: [RequestPart, unknown][] = [['params', req.params], ['querystring', req.query]];
  const reads = (req.routeOptions.schema as { body?: unknown } | undefined)?.body !== undefined;
  if (reads && req.routeOptions.config?.ownTextRule === undefined) parts.push(['body', req.body]);
  return parts;
}

/** Installs the rule on every route of `app`; call before any route is registered. */
export function installStorableText(app: FastifyInstance): void {
  app.addHook('preHandler', async (req) => {
    for (const [part, value] of partsOf(req)) {
      const issue = unstorableIssue(part, value);
      if (issue) throw new SchemaValidationError([issue]);
    }
  });
}
