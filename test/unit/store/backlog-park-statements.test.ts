/**
 * Parking writes a spilling drain's records a bounded number of rows a statement: each statement's
 * texts (the rows' JSON joined) and pg's message for them exist at once, outside and inside the
 * JavaScript heap, so what one statement holds is what one park adds to the worker's memory.
 */
import { describe, expect, it } from 'vitest';
import { createBacklogRepo, PARK_ROWS } from '../../../src/modules/drains/tables/backlog.js';
import type { Sql } from '../../../src/store/sql.js';
import { withBuckets } from '../../helpers/backlog.js';

/** A store that keeps each statement's parameters and answers nothing. */
function recordingSql(): { sql: Sql; statements: (readonly unknown[])[] } {
  const statements: (readonly unknown[])[] = [];
  const sql = {
    kind: 'postgres',
    query: async (_text: string, params?: readonly unknown[]) => {
      statements.push(params ?? []);
      return [];
    },
  } as unknown as Sql;
  return { sql, statements };
}

/** The elements of a text[] literal whose elements hold no quote or backslash (as these ids). */
const elements = (literal: unknown): string[] => (literal as string).slice(2, -2).split('","');

const row = (i: number) => ({
  drainId: 'drn_1', orgId: 'org_1', resourceJson: '{"agent.id":"agt_1"}', recordJson: JSON.stringify({ id: `r${i}`, message: 'x'.repeat(600) }), recordId: `r${i}`, bytes: 620, scrubHits: 0,
});

describe('parking a spilling drain', () => {
  it('writes at most 500 rows (about half a MB of JSON text) a statement, every row once, in order', async () => {
    const { sql, statements } = recordingSql();
    const n = 1_234;
    await createBacklogRepo(sql).park(withBuckets(Array.from({ length: n }, (_, i) => row(i))));
    expect(PARK_ROWS).toBeLessThanOrEqual(500);
    expect(statements).toHaveLength(Math.ceil(n / PARK_ROWS));
    const ids = statements.flatMap((p) => elements(p[8]));
    expect(ids).toEqual(Array.from({ length: n }, (_, i) => `r${i}`));
    for (const p of statements) {
      expect(elements(p[8]).length).toBeLessThanOrEqual(500);
      expect(Buffer.byteLength(p[7] as string)).toBeLessThan(512 * 1024);
      // One resource: one page a statement.
      expect(elements(p[0])).toEqual(['drn_1']);
    }
  });
});
