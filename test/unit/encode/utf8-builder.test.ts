import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Utf8Builder } from '../../../src/encode/utf8-builder.js';

describe('Utf8Builder', () => {
  it('writes exactly what Buffer.from of the joined text would, whatever the characters and the size hint', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ maxLength: 50 })), { maxLength: 60 }),
        fc.nat({ max: 2000 }),
        (strings, hint) => {
          const b = new Utf8Builder(hint);
          const sep = Buffer.from('|');
          for (const s of strings) {
            b.string(s);
            b.bytes(sep);
            b.stringWithFirstByte(`{${s}`, 0x2c);
            b.byte(0x0a);
          }
          const expected = Buffer.from(strings.map((s) => `${s}|,${s}\n`).join(''));
          expect(b.finish().equals(expected)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('grows past a hint far too small, for 4-byte characters at the very end', () => {
    const b = new Utf8Builder(0);
    const s = '🚀'.repeat(5000);
    b.string(s);
    b.string('é');
    expect(b.finish().toString()).toBe(`${s}é`);
  });

  it('copies a span of another buffer, its first byte replaced when asked, growing past its hint', () => {
    const slab = Buffer.from('xx{"a":"é"}yy{"b":2}zz');
    const first = Buffer.from('{"a":"é"}');
    const b = new Utf8Builder(4);
    b.span(slab, 2, 2 + first.length);
    b.byte(0x0a);
    b.span(slab, 2 + first.length + 2, slab.length - 2, 0x2c);
    expect(b.finish().toString()).toBe('{"a":"é"}\n,"b":2}');
  });
});
