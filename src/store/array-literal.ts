/**
 * Array parameters as Postgres array literals, made in one join. `pg` turns a JavaScript array
 * parameter into the same literal element by element (each string through two regular-expression
 * replaces and a concatenation, each number through its value preparation): for the backlog's
 * parks, thousands of record ids and sizes a statement, that cost the worker more CPU than the
 * statement's own text. A literal passed as a string is sent as it is, and `$n::text[]` or
 * `$n::int[]` reads it as Postgres would read the array: the statements do not change.
 */

const NEEDS_ESCAPE = /["\\]/;

/** A text[] literal of `values`: each element quoted, `"` and `\` escaped where any occurs. */
export function textArrayLiteral(values: readonly string[]): string {
  if (values.length === 0) return '{}';
  const joined = values.join('","');
  if (!NEEDS_ESCAPE.test(joined)) return `{"${joined}"}`;
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}

/** An int[] or bigint[] literal of `values` (integers; the cast checks them). */
export function intArrayLiteral(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}
