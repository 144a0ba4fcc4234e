/** COPY rows packed into pieces (logs/repository.ts packRows) and written as runs of neighbours (byte-pieces.ts adjacentRuns). */
import { describe, expect, it } from 'vitest';
import { packRows, placeRows, rowRuns, type LogCopy } from '../../../src/modules/logs/repository.js';
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

describe('placeRows and rowRuns (the worker: no view a row)', () => {
  const copiesOf = (n: number): LogCopy[] => Array.from({ length: n }, (_, i) => ({ json: `{"i":${i}}`, day: 1 }));

  it("places each row on its copy as packRows' view would hold it, and gives COPY one view a run of neighbours", () => {
    const rows = [...rowsOf(300, (i) => `r${i}\t${'a'.repeat(i * 3)}\n`), 'grüße ✓ 日本 🚀\n', 'z'.repeat(70_000) + '\n', 'after\n'];
    const copies = copiesOf(rows.length);
    placeRows(rows, copies);
    const views = packRows(rows);
    copies.forEach((c, i) => expect(c.piece!.subarray(c.rowStart, c.rowEnd).equals(views[i]!)).toBe(true));
    const runs = rowRuns(copies)!;
    expect(Buffer.concat(runs).equals(Buffer.from(rows.join('')))).toBe(true);
    // Pieces of at most 64 KiB of text: one view each, the long row alone, then the last row's piece.
    expect(runs.length).toBe(new Set(copies.map((c) => c.piece)).size);
    expect(runs.length).toBeLessThan(10);
  });

  it('keeps the order of copies from several chunks, a subset of them, and rows given as views', () => {
    const a = copiesOf(50);
    const b = copiesOf(50);
    placeRows(rowsOf(50, (i) => `a${i}\n`), a);
    placeRows(rowsOf(50, (i) => `b${i}\n`), b);
    const own: LogCopy = { json: '{}', day: 1, row: Buffer.from('own\n') };
    // As the accountant joins chunks, and as insertCopies keeps a day's copies out of order of pieces.
    const mixed = [...a.slice(0, 10), ...b.slice(5, 20), own, ...a.slice(10, 12), ...a.slice(30, 31), b[0]!];
    expect(Buffer.concat(rowRuns(mixed)!).toString()).toBe(
      [...rowsOf(10, (i) => `a${i}\n`), ...rowsOf(15, (i) => `b${i + 5}\n`), 'own\n', 'a10\n', 'a11\n', 'a30\n', 'b0\n'].join(''),
    );
    // Neighbours merged, others apart: a0-a9, b5-b19, own, a10-a11, a30, b0.
    expect(rowRuns(mixed)).toHaveLength(6);
  });

  it('answers undefined when a copy has no row (its run goes the statement path)', () => {
    const copies = copiesOf(3);
    placeRows(['x\n', undefined, 'z\n'], copies);
    expect(copies[1]!.piece).toBeUndefined();
    expect(rowRuns(copies)).toBeUndefined();
    expect(rowRuns([copies[0]!, copies[2]!])!.map(String)).toEqual(['x\nz\n']);
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
