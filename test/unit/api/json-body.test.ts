/** The kernel's JSON body parser and its parts: where bytes stop being UTF-8, paths found by one scan of the text, charsets. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { invalidUtf8At } from '../../../src/model/utf8.js';
import { formatPath, scanJson } from '../../../src/api/kernel/json-scan.js';
import { MAX_BODY_DEPTH, parseJsonBody, prototypeKeyPath } from '../../../src/api/kernel/json-body.js';
import { charsetOf, UnsupportedCharset } from '../../../src/api/kernel/charset.js';
import { SchemaValidationError } from '../../../src/api/kernel/schema.js';

describe('invalidUtf8At', () => {
  it('agrees with Node on every byte string, and names a byte before which the text is UTF-8', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const at = invalidUtf8At(bytes);
      expect(at === -1).toBe(isUtf8(bytes));
      if (at >= 0) {
        expect(isUtf8(bytes.subarray(0, at))).toBe(true);
        expect(isUtf8(bytes.subarray(0, at + 4))).toBe(false);
      }
    }), { numRuns: 5000, seed: 7 });
  });

  it('names overlong forms, surrogates, code points past U+10FFFF and cut sequences', () => {
    for (const [bytes, at] of [
      [[0x61, 0xc0, 0xaf], 1], [[0xe0, 0x80, 0xaf], 0], [[0xed, 0xa0, 0x80], 0], [[0xf4, 0x90, 0x80, 0x80], 0],
      [[0x61, 0x62, 0xe2, 0x82], 2], [[0xff], 0], [[0x80], 0], [[0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], -1],
    ] as const) expect(invalidUtf8At(Uint8Array.from(bytes)), JSON.stringify(bytes)).toBe(at);
  });
});

describe('scanJson', () => {
  it('names the first value nested past the bound by its keys and indices', () => {
    expect(scanJson('{"a":{"b":[1,{"c":{}}]}}', 3)).toEqual({ path: ['a', 'b', 1], tooDeep: true });
    expect(scanJson('{"a":{"b":[1,{"c":{}}]}}', 4)).toEqual({ path: ['a', 'b', 1, 'c'], tooDeep: true });
    expect(scanJson('{"a":{"b":[1,{"c":{}}]}}', 5)).toBeUndefined();
    // Brackets inside strings and escaped quotes are text, and keys are read back decoded.
    expect(scanJson('{"x":"[[[[\\"{{{{","k\\u00e9y":[[[]]]}', 2)).toEqual({ path: ['k\u00e9y', 0], tooDeep: true });
    expect(scanJson('['.repeat(1_000_000), MAX_BODY_DEPTH)?.path).toHaveLength(MAX_BODY_DEPTH);
  });

  it('names the field a character falls in, a key included', () => {
    const text = '{"a":1,"list":["x","yz"],"k":{"inner":"v"}}';
    expect(scanJson(text, 8, text.indexOf('yz') + 1)).toEqual({ path: ['list', 1], tooDeep: false });
    expect(scanJson(text, 8, text.indexOf('inner') + 2)).toEqual({ path: ['k', 'inner'], tooDeep: false });
    expect(formatPath([])).toBe('body');
  });

  it('cuts long keys in a path', () => {
    const key = 'k'.repeat(10_000);
    expect(scanJson(`{"${key}":[[]]}`, 2)?.path).toEqual(['k'.repeat(64), 0]);
  });
});

describe('parseJsonBody', () => {
  const issueOf = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(SchemaValidationError);
      return (e as SchemaValidationError).issues[0];
    }
    throw new Error('did not throw');
  };

  it('reads UTF-8 JSON (with or without a byte order mark) in the charsets that are UTF-8', () => {
    expect(parseJsonBody(Buffer.from('{"a":"\u00e9"}'), 'application/json')).toEqual({ a: '\u00e9' });
    expect(parseJsonBody(Buffer.from('\ufeff[1]'), 'application/json; charset=UTF-8')).toEqual([1]);
    expect(parseJsonBody(Buffer.from('{}'), 'application/json;charset="utf-8"')).toEqual({});
  });

  it('refuses other charsets, bad bytes, depth and prototype keys before anything walks the value', () => {
    expect(() => parseJsonBody(Buffer.from('{}'), 'application/json; charset=utf-16')).toThrow(UnsupportedCharset);
    expect(charsetOf('application/json; foo=bar; Charset = "UTF-16LE"')).toBe('utf-16le');
    expect(issueOf(() => parseJsonBody(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), undefined))).toMatchObject({ path: '\ufffd', constraint: 'utf8' });
    expect(issueOf(() => parseJsonBody(Buffer.from(`{"a":${'['.repeat(MAX_BODY_DEPTH)}${']'.repeat(MAX_BODY_DEPTH)}}`), undefined))).toMatchObject({
      path: ['a', ...Array<number>(MAX_BODY_DEPTH - 1).fill(0)].join('.'), constraint: 'maxDepth',
    });
    expect(parseJsonBody(Buffer.from(`{"a":${'['.repeat(MAX_BODY_DEPTH - 1)}${']'.repeat(MAX_BODY_DEPTH - 1)}}`), undefined)).toHaveProperty('a');
    expect(issueOf(() => parseJsonBody(Buffer.from('{"a":[{"__proto__":{}}]}'), undefined))).toMatchObject({ path: 'a.0.__proto__', constraint: 'forbiddenKey' });
    expect(prototypeKeyPath(JSON.parse('{"a":{"constructor":{"prototype":1}}}'))).toEqual(['a', 'constructor', 'prototype']);
    expect(prototypeKeyPath(JSON.parse('{"a":{"constructor":"x","proto":"__proto__"}}'))).toBeUndefined();
  });
});
