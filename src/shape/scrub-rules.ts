/**
 * Customer scrub rules: checked at create time against the spec's limits
 * (256 characters, no backreferences, no nested quantifiers, no lookbehind)
 * and compiled with RE2, whose linear-time matching makes even a
 * pathological pattern harmless.
 */
import RE2 from 're2';

export const MAX_SCRUB_PATTERN = 256;

export type ScrubRuleCheck = { ok: true } | { ok: false; reason: string };

/** A quantifier starting at `i`: *, +, ?, or {n}, {n,}, {n,m} (any other brace is a literal); its length, or 0. */
function quantifierAt(p: string, i: number): number {
  const c = p[i];
  if (c === '*' || c === '+' || c === '?') return 1;
  if (c === '{') return /^\{\d+(?:,\d*)?\}/.exec(p.slice(i, i + 24))?.[0].length ?? 0;
  return 0;
}

/**
 * Whether a quantified group holds a quantifier at any depth: (a+)+, ((a+))+, (?:a*b)*, (x{2,}){3}.
 * A scan rather than one regular expression, so that nesting, escapes (\+), character classes
 * ([+*] quantifies nothing) and group prefixes ((?:, (?<name>) are read for what they are.
 */
export function hasNestedQuantifier(p: string): boolean {
  const open: boolean[] = []; // per open group: whether it holds a quantifier so far
  let groupJustClosed: boolean | undefined; // the atom before position i, when it is a group: whether it held one
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    const q = quantifierAt(p, i);
    if (q > 0) {
      if (groupJustClosed) return true;
      if (open.length > 0) open[open.length - 1] = true;
      i += q - 1;
      if (p[i + 1] === '?' || p[i + 1] === '+') i++; // lazy (or possessive) suffix
      groupJustClosed = undefined;
      continue;
    }
    groupJustClosed = undefined;
    if (c === '\\') i++;
    else if (c === '[') {
      i++;
      if (p[i] === '^') i++;
      if (p[i] === ']') i++;
      while (i < p.length && p[i] !== ']') i += p[i] === '\\' ? 2 : 1;
    } else if (c === '(') {
      open.push(false);
      if (p[i + 1] === '?') {
        // Group syntax, not a quantifier: (?:  (?i:  (?=  (?!  (?<=  (?<!  (?<name>  (?P<name>
        let j = i + 2;
        if (p[j] === '<' && (p[j + 1] === '=' || p[j + 1] === '!')) j += 2;
        else if (p[j] === '<' || (p[j] === 'P' && p[j + 1] === '<')) j = p.indexOf('>', j) + 1 || p.length;
        else {
          while (j < p.length && /[A-Za-z-]/.test(p[j]!)) j++;
          if (p[j] === ':' || p[j] === '=' || p[j] === '!') j++;
        }
        i = j - 1;
      }
    } else if (c === ')') {
      const held = open.pop() ?? false;
      if (held && open.length > 0) open[open.length - 1] = true;
      groupJustClosed = held;
    }
  }
  return false;
}
const BACKREFERENCE = /\\[1-9]|\\k</;
const LOOKBEHIND = /\(\?<[=!]/;

export function checkScrubPattern(pattern: string, flags = ''): ScrubRuleCheck {
  if (pattern.length === 0) return { ok: false, reason: 'pattern must not be empty' };
  if (pattern.length > MAX_SCRUB_PATTERN) return { ok: false, reason: `pattern exceeds ${MAX_SCRUB_PATTERN} characters` };
  if (BACKREFERENCE.test(pattern)) return { ok: false, reason: 'backreferences are not allowed' };
  if (LOOKBEHIND.test(pattern)) return { ok: false, reason: 'lookbehind is not allowed' };
  if (hasNestedQuantifier(pattern)) return { ok: false, reason: 'nested quantifiers are not allowed' };
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
