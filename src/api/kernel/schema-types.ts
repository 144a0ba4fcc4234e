/**
 * Schema pieces every family's routes share: a nullable value, the error
 * bodies of spec 01 part 7.1, and the paging query parameters. Query
 * parameters that are counts are described as decimal text: a number
 * coerced from text would also take `1e3`, `0x10` or ` 5`, which the API
 * refuses.
 */
import { Type, type Static, type TOptional, type TSchema, type TString, type TUnsafe } from '@sinclair/typebox';
import { RULE } from './schema.js';
import { INSTANT_DAYS } from './instant.js';

/**
 * A value of one type or null, as a type pair (`['string', 'null']`; OpenAPI 3.0 shows it as
 * `nullable: true`): the serializer tells the two apart by the value's type, where an `anyOf`
 * would have it validate the value against each branch.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const { type, ...rest } = schema as TSchema & { type?: unknown };
  if (typeof type !== 'string') throw new Error('Nullable takes a schema of one type');
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/**
 * A string out of `values`, as an `enum` (an answer's form of a union of literals, which the
 * serializer would likewise write by validating the value against each branch in turn; in a
 * request, one rule refuses a value that is none of them, where a union would fail once a branch).
 */
export const OneOfStrings = <T extends string>(values: readonly T[], options: { description?: string; rule?: string } = {}): TUnsafe<T> => {
  const { rule, ...rest } = options;
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...rest, ...(rule ? { [RULE]: rule } : {}) });
};

export type Optionals<T extends Record<string, TSchema>> = { [K in keyof T]: TOptional<T[K]> };

/** Every field of `fields` optional (a PATCH body's). */
export const optionals = <T extends Record<string, TSchema>>(fields: T): Optionals<T> =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as Optionals<T>;

/**
 * An error answer (spec 01 part 7.1): open, since each code carries its own fields (`field`,
 * `retryAfterSeconds`, `accepted`...) beside the fixed ones; a 401 carries no code.
 */
export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    code: Type.Optional(Type.String()),
    message: Type.Union([Type.String(), Type.Array(Type.String())], { description: 'a validation failure lists every rule that failed' }),
  },
  { additionalProperties: true, description: 'Error (spec 01 part 7.1)' },
);

/** The error answers of a route, by status. */
export function errorResponses<S extends number>(...statuses: S[]): Record<S, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<S, typeof ErrorBody>;
}

/** Decimal numbers 1 to `max` without leading zeros, as a regular expression's alternatives. */
function upTo(max: number): string {
  const digits = String(max);
  const alternatives: string[] = [];
  if (digits.length > 1) alternatives.push(`[1-9]\\d{0,${digits.length - 2}}`);
  for (let i = 0; i < digits.length; i++) {
    const d = Number(digits[i]);
    const low = i === 0 ? 1 : 0;
    if (d > low) alternatives.push(`${digits.slice(0, i)}[${low}-${d - 1}]\\d{${digits.length - i - 1}}`);
  }
  alternatives.push(digits);
  return alternatives.join('|');
}

/**
 * `limit`: a count from 1 (at most 15 digits), default `fallback`. Above `max` it is refused, or
 * taken as `max` when `clamp` (the log reads); the handler reads it with Number().
 */
export function LimitParam(opts: { fallback: number; max: number; clamp?: boolean }): TString {
  const { fallback, max, clamp = false } = opts;
  return Type.String({
    pattern: clamp ? '^(?=\\d{1,15}$)0*[1-9]\\d*$' : `^(?=\\d{1,15}$)0*(${upTo(max)})$`,
    default: String(fallback),
    description: clamp ? `A positive integer, default ${fallback}; above ${max} it is taken as ${max}` : `An integer from 1 to ${max}, default ${fallback}`,
    [RULE]: clamp ? `limit must be a positive integer (above ${max} it is taken as ${max})` : `limit must be an integer from 1 to ${max}`,
  });
}

/** `cursor`: a previous answer's `nextCursor` (base64url; what it holds is checked by decodeCursor). */
export const CursorParam = Type.String({
  maxLength: 1024,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'A previous answer\'s nextCursor',
  [RULE]: 'cursor is not a cursor this route returned',
});

/**
 * An instant a request names (a body field or a query parameter): an RFC 3339 date-time with a
 * zone, of a real calendar day, from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (the kernel's
 * `date-time` format, instant.ts); outside, the field's 400 names it.
 */
export const Instant = (options: { description?: string } = {}): TString =>
  Type.String({
    format: 'date-time',
    maxLength: 64,
    description: options.description ?? `RFC 3339 date-time with a zone, ${INSTANT_DAYS}`,
    [RULE]: `{path} must be an ISO 8601 date-time with a zone, ${INSTANT_DAYS}`,
  });
