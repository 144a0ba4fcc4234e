/**
 * Route schemas are the source of truth for a request's shape: JSON Schema
 * (built with TypeBox in the families), compiled once by Ajv, enforced by
 * fastify before the handler runs; response schemas are compiled into the
 * serializer, so a field a schema does not name never goes out. What a schema
 * cannot say (a scrub pattern that compiles, an endpoint that is public, an
 * agent of the organization, a plan's limit) stays in the family's service.
 *
 * A failed check becomes one AppError for the error handler to render in the
 * family's shape (error-shapes.ts): by default `400 VALIDATION_FAILED` with
 * the failed rules, or what the route's `validationError` makes of them (the
 * drain family's own `DRAIN_VALIDATION_FAILED`, for example).
 */
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { AppError } from '../../errors.js';
import { KernelErrors } from './error-registry.js';
import type { ErrorShape } from './error-shapes.js';
import { boundedInstant } from './instant.js';

/** The part of the request a rule was about, as fastify names it. */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

/** One failed rule: where (`input.day`, `headers.0.name`; the parameter's name for a query), which keyword, and in words. */
export interface SchemaIssue {
  part: RequestPart;
  path: string;
  constraint: string;
  message: string;
}

/** Turns a request's failed rules (in schema order, at least one) into the error a route answers. */
export type ValidationErrorMapper = (issues: readonly SchemaIssue[]) => AppError;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's own answer to a schema failure; the kernel's VALIDATION_FAILED when not given. */
    validationError?: ValidationErrorMapper;
    /**
     * Why this route's body is not checked by a schema: it takes none, or its own parser checks it
     * (a body schema, when given, then only documents it). A non-public POST, PUT or PATCH without a
     * body schema and without this reason cannot be registered.
     */
    bodyUnchecked?: string;
  }
}

/**
 * A schema annotation: the rule in the words the API answers with, used instead of Ajv's for any
 * keyword failing on that schema node (`Type.String({ maxLength: 64, 'x-rule': 'name must be ...' })`).
 * Either one text for every keyword, or texts per keyword (`{ maxItems: '...', '*': '...' }`), where
 * `null` names a null given where the node takes none and `*` any keyword not named. `{path}` in a
 * text is the failing value's path (`headers.0.name`, or the part: `body`).
 */
export const RULE = 'x-rule';

/** The texts an `x-rule` annotation may hold. */
export type RuleText = string | Partial<Record<string, string>>;

/** Methods whose request carries a body, which a route then describes with a schema. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

// ajv-formats is CommonJS: its default export arrives as the module object under Node's ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

function compiler(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, verbose: true, strict: false, ...options });
  addFormats(ajv);
  // A request's date-time is an instant the store can hold, of a day the calendar has (instant.ts):
  // ajv-formats' own takes year 0, leap seconds and years no timestamp column can keep.
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => !Number.isNaN(boundedInstant(s)) });
  ajv.addKeyword({ keyword: RULE, schemaType: ['string', 'object'] });
  return ajv;
}

/**
 * Turns validation and response serialization on for every route of `app`. Bodies are checked as
 * sent (a "5" is not 5); query strings and path parameters arrive as text and are coerced to the
 * schema's types (`?limit=20`), arrays from repeated parameters.
 */
export function installSchemas(app: FastifyInstance): void {
  const body = compiler({ coerceTypes: false });
  const text = compiler({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema as object));
  app.setSchemaErrorFormatter((errors, dataVar) => new SchemaValidationError(issuesOf(errors as ErrorObject[], dataVar as RequestPart)));
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    const waived = route.config?.bodyUnchecked;
    if (waived !== undefined) {
      if (waived.trim() === '') throw new Error(`${methods.join(',')} ${route.url}: bodyUnchecked must say why`);
      // A body schema beside the reason documents the body; the route's own parser checks it.
      if (route.schema?.body !== undefined) {
        route.validatorCompiler = ({ schema, httpPart }) => (httpPart === 'body' ? () => true : text.compile(schema as object));
      }
      return;
    }
    if (route.config?.access?.resource === 'public' || !methods.some((m) => BODY_METHODS.has(m))) return;
    if (route.schema?.body === undefined) {
      throw new Error(
        `${methods.join(',')} ${route.url} takes a body but declares no body schema: give it one, or say why not in config.bodyUnchecked (src/api/kernel/schema.ts)`,
      );
    }
  });
}

/** The `bodyUnchecked` reason of a route that takes no body (an action on the resource in its path). */
export const NO_BODY = 'takes no body; one sent is ignored';

/** What fastify's validation step throws; the error handler turns it into the route's AppError. */
export class SchemaValidationError extends Error {
  readonly statusCode = 400;
  constructor(readonly issues: readonly SchemaIssue[]) {
    super(issues.map((i) => i.message).join('; '));
  }
}

/** The AppError a route answers for `issues`: its own mapper's, or the kernel's VALIDATION_FAILED. */
export function validationFailure(issues: readonly SchemaIssue[], shape: ErrorShape | undefined, mapper?: ValidationErrorMapper): AppError {
  if (mapper) return mapper(issues);
  const rules = issues.map((i) => i.message);
  const first = issues[0]!;
  return KernelErrors.VALIDATION_FAILED(rules.join('; '), {
    field: first.path,
    message: rules,
    ...(shape === 'workflows' ? { details: issues.map(({ path, constraint, message }) => ({ path, constraint, message })) } : {}),
  });
}

/** Ajv's errors as issues: one per failed rule, the noise of combinators (`anyOf`, `if`) left out. */
export function issuesOf(errors: readonly ErrorObject[], part: RequestPart): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const path = pathOf(e);
    const message = repeated(e, part) ? `${path || part} may be given once` : ruleOf(e, path || part) ?? `${path || part} ${describe(e)}`;
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ part, path: path || part, constraint: e.keyword, message });
  }
  // A failure of a combinator alone (every branch failed without a leaf of its own).
  if (issues.length === 0 && errors.length > 0) {
    const e = errors[0]!;
    issues.push({ part, path: pathOf(e) || part, constraint: e.keyword, message: `${pathOf(e) || part} ${describe(e)}` });
  }
  return issues;
}

/** `/headers/0/name` as `headers.0.name`; a missing or unknown property names itself. */
function pathOf(e: ErrorObject): string {
  const segments = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required' && typeof params.missingProperty === 'string') segments.push(params.missingProperty);
  if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') segments.push(params.additionalProperty);
  return segments.join('.');
}

/** The schema node's own words for this failure (its `x-rule`), if it has them. */
function ruleOf(e: ErrorObject, path: string): string | undefined {
  const rule = (e.parentSchema as Record<string, unknown> | undefined)?.[RULE] as RuleText | undefined;
  if (rule === undefined) return undefined;
  const text = typeof rule === 'string' ? rule : (e.keyword === 'type' && e.data === null ? rule.null : undefined) ?? rule[e.keyword] ?? rule['*'];
  return text?.replaceAll('{path}', path);
}

/** A query parameter repeated (?limit=1&limit=2): an array where the schema takes one value. */
const repeated = (e: ErrorObject, part: RequestPart): boolean =>
  e.keyword === 'type' && part !== 'body' && Array.isArray(e.data) && (e.params as { type?: unknown }).type !== 'array';

function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'type':
      return `must be ${params.type === 'integer' ? 'an integer' : `a${/^[aeiou]/.test(String(params.type)) ? 'n' : ''} ${String(params.type)}`}`;
    default:
      return e.message ?? `breaks the ${e.keyword} rule`;
  }
}

/** A route schema's type in the families (fastify's, re-exported so families need not know it). */
export type RouteSchema = FastifySchema;

/**
 * A route schema as the OpenAPI 3.0 document shows it: a choice stated as `if`/`then`/`else` (for the
 * serializer, which then tells the branches apart by the `if` alone instead of validating the value
 * against each) shown as the `oneOf` of its branches, which 3.0 knows. A copy; the route keeps its own.
 */
export function documentedSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(documentedSchema) as T;
  if (typeof schema !== 'object' || schema === null) return schema;
  const { if: condition, then, else: otherwise, ...rest } = schema as Record<string, unknown>;
  const copy = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, documentedSchema(v)]));
  if (condition !== undefined && then !== undefined && otherwise !== undefined) copy.oneOf = [documentedSchema(then), documentedSchema(otherwise)];
  return copy as T;
}
