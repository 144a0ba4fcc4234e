/**
 * The template version seal (seal.ts; contract templates, `contentHash`): RFC 8785 canonical JSON,
 * hashed with SHA-256. Fixed vectors for key order, unicode, numbers and nesting, and properties:
 * reordering keys never changes the seal, changing any value always does.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, contentHash, installSeal, NotCanonicalizable } from '../../../../src/modules/templates/seal.js';

describe('canonical JSON (RFC 8785)', () => {
  it('sorts object keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [1, 'é', { d: null, c: true }] })).toBe('{"a":[1,"é",{"c":true,"d":null}],"b":1}');
    expect(canonicalJson({ z: { y: { x: {}, w: [] } }, '': 0 })).toBe('{"":0,"z":{"y":{"w":[],"x":{}}}}');
  });

  it('orders keys by UTF-16 code units, not by code points', () => {
    // RFC 8785 part 3.2.3's example keys.
    const rfc = { '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' };
    // Read from the text: a parsed object would list the integer-like key "1" first whatever the order.
    const keys = [...canonicalJson(rfc).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
    // U+1F600 (surrogates D83D DE00) sorts before U+FB33 by code unit, after it by code point.
    expect(canonicalJson({ '\ufb33': 1, '\ud83d\ude00': 2 })).toBe('{"\ud83d\ude00":2,"\ufb33":1}');
  });

  it('writes strings as JSON.stringify does: controls escaped, other characters as themselves', () => {
    expect(canonicalJson('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(canonicalJson('\n\t\b\f\r\u0007\u001f')).toBe('"\\n\\t\\b\\f\\r\\u0007\\u001f"');
    expect(canonicalJson('€ 😀 é \u2028 /')).toBe('"€ 😀 é \u2028 /"');
  });

  it('writes numbers in their shortest ECMAScript form', () => {
    expect(canonicalJson([1.0, 0.1, -0, 1e21, 1e-7, 123456789012345680000, 5e-324, -1.5, 2 ** 53])).toBe('[1,0.1,0,1e+21,1e-7,123456789012345680000,5e-324,-1.5,9007199254740992]');
  });

  it('keeps array order and nesting; absent members are left out, absent array items are null', () => {
    expect(canonicalJson([[3, [2, [1]]], { a: undefined, b: [undefined] }])).toBe('[[3,[2,[1]]],{"b":[null]}]');
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('refuses what JSON cannot hold, naming where', () => {
    expect(() => canonicalJson({ a: [1, Number.NaN] })).toThrow(NotCanonicalizable);
    expect(() => canonicalJson({ a: { b: Infinity } })).toThrow(/a\.b is not a finite number/);
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(/d is not a plain object/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/f is a function/);
  });
});

describe('contentHash', () => {
  it('is the lowercase hex SHA-256 of the canonical form', () => {
    expect(contentHash({})).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    expect(contentHash({ b: 1, a: [1, 'é', { d: null, c: true }] })).toBe('f8eeeb0678b2abec5129c11e54156d847ea111b04e950dfb8d914c40c439ff12');
    expect(contentHash({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  /** The value with every object's keys in a shuffled order (Object.fromEntries keeps `__proto__` an own key). */
  const reordered = (v: unknown, seed: number): unknown => {
    if (Array.isArray(v)) return v.map((x, i) => reordered(x, seed + i));
    if (v === null || typeof v !== 'object') return v;
    const entries = Object.entries(v as Record<string, unknown>).map(([k, x], i) => [k, reordered(x, seed * 31 + i)] as const);
    const shuffled = [...entries].sort((a, b) => ((hash(a[0], seed) - hash(b[0], seed)) || (a[0] < b[0] ? -1 : 1)));
    return Object.fromEntries(shuffled);
  };
  const hash = (s: string, seed: number): number => [...s].reduce((h, c) => (h * 33 + c.charCodeAt(0)) % 1_000_003, seed % 1_000_003);

  it('never changes when keys are reordered', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 1_000_000 }), (value, seed) => {
      expect(contentHash(reordered(value, seed))).toBe(contentHash(value));
    }), { numRuns: 300, seed: 20261129 });
  });

  /** Every place a value sits in `v`: its path of keys and indexes. */
  const places = (v: unknown, at: Array<string | number> = []): Array<Array<string | number>> => {
    const own = [at];
    if (Array.isArray(v)) return [...own, ...v.flatMap((x, i) => places(x, [...at, i]))];
    if (v !== null && typeof v === 'object') return [...own, ...Object.entries(v).flatMap(([k, x]) => places(x, [...at, k]))];
    return own;
  };
  const replaced = (v: unknown, path: ReadonlyArray<string | number>, make: (old: unknown) => unknown): unknown => {
    if (path.length === 0) return make(v);
    const [head, ...rest] = path;
    if (Array.isArray(v)) return v.map((x, i) => (i === head ? replaced(x, rest, make) : x));
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, k === head ? replaced(x, rest, make) : x]));
  };
  /** A value that differs from `old` whatever it is (its JSON text never equals the old one's). */
  const changes = [
    (old: unknown) => [old],
    (old: unknown) => ({ v: old }),
    (old: unknown) => (typeof old === 'string' ? `${old}.` : 'changed'),
    (old: unknown) => (typeof old === 'number' ? String(old) : 0),
    (old: unknown) => (old === null ? false : null),
  ];

  it('always changes when any value changes, at any depth', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.nat(), fc.nat({ max: changes.length - 1 }), (value, pick, how) => {
      const all = places(value);
      const path = all[pick % all.length]!;
      const changed = replaced(value, path, changes[how]!);
      // A change that lands on the same JSON (0 replaced by 0) is no change.
      if (canonicalJson(changed) === canonicalJson(value)) return;
      expect(contentHash(changed)).not.toBe(contentHash(value));
    }), { numRuns: 300, seed: 20261129 });
  });

  it('changes when a key is renamed', () => {
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), (value) => {
      const [first] = Object.keys(value);
      const renamed = Object.fromEntries(Object.entries(value).map(([k, v]) => [k === first ? `${k}\u0001` : k, v]));
      if (Object.keys(renamed).length !== Object.keys(value).length) return;
      expect(contentHash(renamed)).not.toBe(contentHash(value));
    }), { numRuns: 200, seed: 20261129 });
  });
});

describe('installSeal', () => {
  const payload = {
    content: { agent: { name: 'a' }, declaredTriggers: [] }, envContract: null, connections: [{ key: 'crm', type: 'crm', required: true }],
    personaTemplate: null, triggerPresets: null, paramsMeta: null, onInstall: null, onUninstall: null, installPolicy: { perWorkspace: 'single' },
  };

  it('covers every section an install applies, and only those', () => {
    const base = installSeal(payload);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(base).not.toBe(contentHash(payload.content));
    for (const section of Object.keys(payload) as Array<keyof typeof payload>) {
      expect(installSeal({ ...payload, [section]: { changed: section } }), section).not.toBe(base);
    }
    // Fields outside the payload (a version's number, its changelog) cannot reach the seal.
    expect(installSeal({ ...payload, ...({ changelog: 'x', version: 9 } as object) })).toBe(base);
  });
});
