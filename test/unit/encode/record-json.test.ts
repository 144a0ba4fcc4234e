import { describe, expect, it } from 'vitest';
import { writeRecordJson } from '../../../src/encode/record-json.js';
import { SerialisedEntry } from '../../../src/encode/encoder.js';
import { shapeRecord, type DeliveredRecord } from '../../../src/shape/delivered-record.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

/** What the writer must equal: JSON.stringify's text as UTF-8. */
const expected = (r: DeliveredRecord): Buffer => Buffer.from(JSON.stringify(r), 'utf8');

function written(r: DeliveredRecord, room = 64 * 1024, start = 0): Buffer {
  const out = Buffer.alloc(room, 0xee);
  const end = writeRecordJson(r, out, start);
  expect(end).toBeGreaterThanOrEqual(0);
  return out.subarray(start, end);
}

const base: DeliveredRecord = {
  id: 'r1', timestamp: '2026-01-01T00:00:00.000Z', observedTimestamp: '2026-01-01T00:00:01.000Z', eventName: 'svc.mcp.error',
  severityNumber: 17, severityText: 'ERROR', attributes: { 'tool.name': 'crm', 'duration.ms': 12, cached: true, 'svc.execution.id': 'exe_1' },
  body: 'tool call returned ok', traceId: '0123456789abcdef0123456789abcdef', spanId: '0123456789abcdef',
};

// Every kind of character JSON.stringify treats apart, alone and inside text shorter and longer
// than the length from which strings are checked and copied natively (48), and at it.
const ODD = ['"', '\\', '\n', '\t', '\x00', '\x1f', '\x7f', 'é', '漢', '😀', '\ud800', '\udfff', '\u2028', '/', '<', '~', ' '];
const around = (c: string): string[] => [c, `a${c}b`, `${'w'.repeat(30)}${c}`, `${'x'.repeat(47)}${c}`, `${c}${'y'.repeat(47)}`, `${'z'.repeat(46)}${c}`, `${c}${'v'.repeat(200)}`];

describe('writeRecordJson', () => {
  it('writes JSON.stringify\'s bytes for a record with every field', () => {
    expect(written(base).equals(expected(base))).toBe(true);
  });

  it('leaves out the fields a record does not have, as JSON.stringify does', () => {
    const { body: _b, traceId: _t, spanId: _s, ...bare } = base;
    const r: DeliveredRecord = { ...bare, attributes: {} };
    expect(written(r).toString()).toBe(JSON.stringify(r));
    const undefinedValues = { ...base, body: undefined, attributes: { a: 'x', gone: undefined as unknown as string, b: 2 } };
    expect(written(undefinedValues).toString()).toBe(JSON.stringify(undefinedValues));
  });

  it('escapes and encodes every string as JSON.stringify does: quotes, controls, non-ASCII, lone surrogates', () => {
    for (const c of ODD) {
      for (const text of around(c)) {
        const r: DeliveredRecord = { ...base, id: text, body: text, attributes: { [text]: text, plain: 'p' } };
        expect(written(r).equals(expected(r)), JSON.stringify(text)).toBe(true);
      }
    }
  });

  it('writes numbers and booleans as JSON.stringify does, integer-like keys first', () => {
    const attributes = { z: 1, '10': -0, '2': 1e21, small: 1.5e-7, neg: -42.125, big: Number.MAX_VALUE, tiny: Number.MIN_VALUE, nan: NaN, inf: -Infinity, yes: true, no: false };
    const r = { ...base, attributes };
    expect(written(r).toString()).toBe(JSON.stringify(r));
    expect(Object.keys(JSON.parse(written(r).toString()).attributes).slice(0, 2)).toEqual(['2', '10']);
  });

  it('equals JSON.stringify for shaped synthetic records, redacted and with content withheld', () => {
    const orgs = [{ orgId: 'org_a', agents: [{ id: 'agt_1', name: 'bot', version: '1.2.0' }] }];
    const records = [...syntheticRecords(500, { orgs, seed: 7, idPrefix: 'rj' })];
    for (const opts of [{ includeContent: true, redact: null }, { includeContent: false, redact: new Set(['tool.name']) }]) {
      for (const record of records) {
        const shaped = shapeRecord(record, '2026-01-01T00:00:01.000Z', opts);
        expect(written(shaped).equals(expected(shaped))).toBe(true);
      }
    }
  });

  it('equals JSON.stringify over random text (2,000 records)', () => {
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const palette = ['a', 'Z', '0', ' ', ...ODD];
    const text = (): string => Array.from({ length: rand(120) }, () => palette[rand(palette.length)]).join('');
    for (let i = 0; i < 2000; i++) {
      const r: DeliveredRecord = { ...base, id: text(), eventName: text(), body: text(), attributes: { [text()]: text(), [text()]: rand(1000) - 500, [text()]: rand(2) === 0 } };
      expect(written(r).equals(expected(r))).toBe(true);
    }
  });

  it('answers -1 rather than write past its room, and fits where the room is enough', () => {
    // Room is judged by the most a string could take (six bytes a unit), so what fits is checked with room to spare.
    expect(writeRecordJson(base, Buffer.alloc(4096), 100)).toBe(100 + expected(base).length);
    const long = { ...base, body: 'é'.repeat(2000) };
    const small = Buffer.alloc(1024, 0);
    expect(writeRecordJson(long, small, 0)).toBe(-1);
    expect(writeRecordJson(base, small, small.length - 10)).toBe(-1);
    // What the room holds is checked before each string: nothing is written past the buffer.
    const guarded = Buffer.alloc(2048, 0);
    expect(writeRecordJson(long, guarded.subarray(0, 1024), 0)).toBe(-1);
    expect(guarded.subarray(1024).every((b) => b === 0)).toBe(true);
    // Control characters take six bytes each (\u0000): 150 of them do not fit 1 KB with the margin.
    expect(writeRecordJson({ ...base, traceId: undefined, spanId: undefined, body: '\x00'.repeat(150) }, guarded.subarray(0, 1024), 0)).toBe(-1);
  });
});

describe('SerialisedEntry.written', () => {
  it('holds the record\'s JSON as UTF-8 from the start, across slabs, and answers it as text, length and record', () => {
    const entries: SerialisedEntry[] = [];
    const records: DeliveredRecord[] = [];
    // Enough records (with a large one among them) to fill several 64 KB slabs.
    for (let i = 0; i < 600; i++) {
      const r = { ...base, id: `r${i}`, body: i % 97 === 0 ? '漢'.repeat(3000) : `body ${'x'.repeat(i % 200)} é` };
      records.push(r);
      entries.push(SerialisedEntry.written(r, i % 3));
    }
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const json = JSON.stringify(records[i]);
      expect(e.utf8!.equals(Buffer.from(json, 'utf8'))).toBe(true);
      expect(e.json).toBe(json);
      expect(e.byteLength).toBe(Buffer.byteLength(json));
      expect(e.record).toEqual(records[i]);
      expect(e.scrubHits).toBe(i % 3);
      expect(e.id).toBe(`r${i}`);
    }
  });

  it('gives a record longer than a slab holds bytes of its own', () => {
    const r = { ...base, body: 'b'.repeat(100_000) };
    const e = SerialisedEntry.written(r, 0);
    expect(e.utf8!.equals(expected(r))).toBe(true);
    expect(e.utf8!.buffer.byteLength).toBeGreaterThanOrEqual(expected(r).length);
  });
});
