/** The nested-quantifier rule of scrub patterns (spec 01 part 4.1): what it refuses, and what it must not. */
import { describe, expect, it } from 'vitest';
import { checkScrubPattern, hasNestedQuantifier } from '../../../src/model/scrub-rules.js';

describe('hasNestedQuantifier', () => {
  it.each([
    '(a+)+$', '(x{2,}y*)*', '((a+))+', '((a)+)+', '(?:a*b)*', '(x{2,}){3}', '(x+x+)+y', '(a|a?)+b', '(\\w+\\s?)*$',
    '((a+)b)*', '(a(b+))*', '(?:(?:a+))+', '(?<n>a+)+', '(?P<n>a+)*', '(a+?)+', '(a{1,3}){2}', '(?i:a+)+',
  ])('finds the nested quantifier in %s', (p) => {
    expect(hasNestedQuantifier(p)).toBe(true);
    expect(checkScrubPattern(p)).toEqual({ ok: false, reason: 'nested quantifiers are not allowed' });
  });

  it.each([
    '(?:ab)+', '(?i:secret)+', '([+*])+', '(a)+', '(a|aa)*c', 'a+b+', '(\\+)+', '(a{)+', '(?<n>ab)+', '\\d{4}-\\d{4}',
    '(a+)b', '(a+)(b)+', 'tok_\\d+', '[(]+a+[)]+', '(a\\))+', '(?:sk|pk)_[A-Za-z0-9]{12,}',
  ])('leaves %s alone (quantified groups without a quantifier inside, classes, escapes, group syntax)', (p) => {
    expect(hasNestedQuantifier(p)).toBe(false);
  });
});
