/**
 * Customer scrub rules: checked at create time against the spec's limits
 * (256 characters, no backreferences, no nested quantifiers, no lookbehind)
 * and compiled with RE2, whose linear-time matching makes even a
 * pathological pattern harmless.
 */
import RE2 from 're2';

export const MAX_SCRUB_PATTERN = 256;

export type ScrubRuleCheck = { ok: true } | { ok: false; reason: string };

// A quantified group that itself contains a quantifier: (a+)+, (a*b?)*, (x{2,})+ ...
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[*+?}](?:[^()\\]|\\.)*\)\s*[*+?{]/;
const BACKREFERENCE = /\\[1-9]|\\k</;
const LOOKBEHIND = /\(\?<[=!]/;

export function checkScrubPattern(pattern: string, flags = ''): ScrubRuleCheck {
  if (pattern.length === 0) return { ok: false, reason: 'pattern must not be empty' };
  if (pattern.length > MAX_SCRUB_PATTERN) return { ok: false, reason: `pattern exceeds ${MAX_SCRUB_PATTERN} characters` };
  if (BACKREFERENCE.test(pattern)) return { ok: false, reason: 'backreferences are not allowed' };
  if (LOOKBEHIND.test(pattern)) return { ok: false, reason: 'lookbehind is not allowed' };
  if (NESTED_QUANTIFIER.test(pattern)) return { ok: false, reason: 'nested quantifiers are not allowed' };
  if (!/^[imsu]*$/.test(flags) || new Set(flags).size !== flags.length) {
    return { ok: false, reason: 'flags may only combine i, m, s and u' };
  }
  let re: RE2;
  try {
    re = new RE2(pattern, flags.includes('u') ? flags : flags + 'u');
  } catch (e) {
    return { ok: false, reason: `pattern does not compile in RE2: ${(e as Error).message.slice(0, 120)}` };
  }
  // An empty match scrubs nothing and would shadow the rules after it.
  if (re.test('')) return { ok: false, reason: 'pattern must not match the empty string' };
  return { ok: true };
}
