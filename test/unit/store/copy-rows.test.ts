/** COPY rows packed into pieces (logs/repository.ts packRows) and written as runs of neighbours (byte-pieces.ts adjacentRuns). */
import { describe, expect, it } from 'vitest';
import { packRows } from '../../../src/modules/logs/repository.js';
import { adjacentRuns } from '../../../src/store/byte-pieces.js';

const rowsOf = (n: number, text: (i: number) => string) => Array.from({ length: n }, (_, i) => text(i));

describe('packRows', () => {
  it('gives each row a view holding exactly its UTF-8, rows without one left undefined', () => {
    const rows = [...rowsOf(300, (i) => `r${i}\t${'a'.repeat(i * 3)}\n`), undefined, 'grüße ✓ 日本 🚀\n', undefined, 'z'.repeat(70_000) + '\n', 'after\n'];
    const packed = packRows(rows);
    expect(packed).toHaveLength(rows.length);
    rows.forEach((row, i) => {
      if (row === undefined) expect(packed[i]).toBeUndefined();
      else expect(packed[i]!.equals(Buffer.from(row))).toBe(true);
    });
  });

  it('packs rows side by side in pieces of at most 64 KiB of text, a longer row alone', () => {
    const rows = [...rowsOf(200, (i) => `${i}:${'x'.repeat(1000)}\n`), 'y'.repeat(100_000) + '\n', 'tail\n'];
    const packed = packRows(rows) as Buffer[];
    const runs = [...adjacentRuns(packed)];
    expect(Buffer.concat(runs).equals(Buffer.from(rows.join('')))).toBe(true);
    // 200 rows of about 1 KB in four pieces, the long row a piece of its own, then the last row.
    expect(runs.map((r) => r.length > 64 * 1024)).toEqual([false, false, false, false, true, false]);
    expect(runs[4]!.toString()).toBe(rows[200]);
  });
});

describe('adjacentRuns', () => {
  it('joins neighbours in one memory, keeps others apart, skips empty ones, and copies no byte', () => {
    const a = Buffer.from('0123456789');
    const b = Buffer.from('abcdef');
    const parts = [a.subarray(0, 3), a.subarray(3, 5), Buffer.alloc(0), a.subarray(5, 10), b.subarray(0, 2), a.subarray(0, 2), b.subarray(2, 6)];
    const runs = [...adjacentRuns(parts)];
    expect(runs.map((r) => r.toString())).toEqual(['0123456789', 'ab', '01', 'cdef']);
    expect(runs[0]!.buffer).toBe(a.buffer);
    a[0] = 0x41;
    expect(runs[0]!.toString()).toBe('A123456789');
  });
});
