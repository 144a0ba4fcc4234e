/**
 * The statement half of keyset paging, for every repository: the condition for the rows after a
 * cursor's (keysetAfter), the order they are read in (keysetOrder), one row more than the page
 * (keysetFetch), and the page cut from those rows with its next cursor (keysetPage). It lives in
 * the store kernel because the store's repositories and the families' persistence the engine
 * writes use it and may not import the API kernel; the cursor's text and its errors are the API
 * kernel's (api/kernel/pagination.ts, which hands families this half too).
 */

/** One column of a keyset sort: its SQL expression, and the cast its cursor value takes as a parameter. */
export interface KeysetColumn {
  expr: string;
  cast?: string;
}

export type SortDirection = 'asc' | 'desc';

/**
 * The condition for the rows after the cursor's in `direction` (a row comparison, so ties on the
 * first columns are ordered by the next): `(a, b) < ($n::cast, $m)` descending, `>` ascending.
 * `param` adds a parameter and answers its placeholder; a Date goes in as its ISO text.
 */
export function keysetAfter(columns: readonly KeysetColumn[], values: readonly unknown[], direction: SortDirection, param: (v: unknown) => string): string {
  const placeholders = columns.map((c, i) => {
    const v = values[i];
    return `${param(v instanceof Date ? v.toISOString() : v)}${c.cast ? `::${c.cast}` : ''}`;
  });
  return `(${columns.map((c) => c.expr).join(', ')}) ${direction === 'desc' ? '<' : '>'} (${placeholders.join(', ')})`;
}

/** The ORDER BY list of a keyset sort: every column in `direction`. */
export function keysetOrder(columns: readonly KeysetColumn[], direction: SortDirection): string {
  return columns.map((c) => `${c.expr} ${direction}`).join(', ');
}

/** The rows a keyset statement asks for: one more than the page, to tell whether another follows. */
export const keysetFetch = (limit: number): number => limit + 1;

/** The page cut from the `keysetFetch(limit)` rows read, and the cursor of its last row when more follow. */
export function keysetPage<R>(rows: readonly R[], limit: number, cursorOf: (last: R) => string): { items: R[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}
