/** A change's notification to the other API processes: sent after the fact, gathered with the others of a few milliseconds. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ANNOUNCE_GATHER_MS, createChangeNotice } from '../../../src/store/unit-of-work.js';
import { topicEpoch } from '../../../src/store/change-epochs.js';
import type { Sql } from '../../../src/store/sql.js';

/** A store that only records its statements. */
function recordingSql(kind: Sql['kind']): { sql: Sql; sent: { text: string; params: readonly unknown[] | undefined }[] } {
  const sent: { text: string; params: readonly unknown[] | undefined }[] = [];
  const sql = { kind, query: async (text: string, params?: readonly unknown[]) => (sent.push({ text, params }), []) } as unknown as Sql;
  return { sql, sent };
}

describe('change notices', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('moves this process counter at once and sends the topics changed within the window in one statement', async () => {
    const { sql, sent } = recordingSql('postgres');
    const changed = createChangeNotice(sql);
    const before = topicEpoch('notice.a');
    changed('notice.a');
    expect(topicEpoch('notice.a')).toBe(before + 1);
    changed('notice.b');
    changed('notice.a');
    expect(sent).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(ANNOUNCE_GATHER_MS);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.text).toContain('pg_notify');
    expect(sent[0]!.params).toEqual([['notice.a', 'notice.b']]);
    changed('notice.c');
    await vi.advanceTimersByTimeAsync(ANNOUNCE_GATHER_MS);
    expect(sent.map((s) => s.params)).toEqual([[['notice.a', 'notice.b']], [['notice.c']]]);
  });

  it('sends nothing on the embedded store (one process)', async () => {
    const { sql, sent } = recordingSql('pglite');
    createChangeNotice(sql)('notice.a');
    await vi.advanceTimersByTimeAsync(ANNOUNCE_GATHER_MS * 2);
    expect(sent).toHaveLength(0);
  });
});
