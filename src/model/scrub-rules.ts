/**
 * Customer scrub rules: checked at create time against the spec's limits
 * (256 characters, no backreferences, no nested quantifiers, no lookbehind)
 * and a cost bound, then compiled with RE2.
 *
 * RE2 never backtracks, but its time is linear in the input times the size of
 * its compiled program once its DFA cache overflows, and counted repetition
 * makes the program large: `.{1000}` is a thousand copies of `.` (each several
 * UTF-8 byte ranges), and 36 of them in one rule blocked the event loop for
 * 41 s on one 100 KB record. So every rule is costed before it is accepted:
 * its atoms weighted (a Unicode property class such as \p{L} compiles to
 * hundreds of ranges) and multiplied by the counts that repeat them
 * (`(?:.{20}){50}` costs 1,000). Measured on this code, a drain at the bounds
 * below scrubs a 256 KB string (the largest a record can carry) in about
 * 100 ms at worst; past them the time rose steeply (`.{500}.{500}`: 6 s).
 */
import RE2 from 're2';

export const MAX_SCRUB_PATTERN = 256;
/** The cost bound of one rule, and of all the rules of a drain together (they compile into one alternation). */
export const MAX_SCRUB_RULE_COST = 256;
export const MAX_SCRUB_DRAIN_COST = 1024;
/** The weight of a Unicode property class (\p{..}, \P{..}) against 1 for any other atom. */
const PROPERTY_CLASS_WEIGHT = 32;

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
    else if (c === '[') i = classEnd(p, i);
    else if (c === '(') {
      open.push(false);
      i = groupSyntaxEnd(p, i);
    } else if (c === ')') {
      const held = open.pop() ?? false;
      if (held && open.length > 0) open[open.length - 1] = true;
      groupJustClosed = held;
    }
  }
  return false;
}
/**
 * The pattern with every `\Q...\E` quoted span written as escaped literals. RE2 reads the span as
 * literal text, so `(\Q)\E+)+` is a group holding a quantified `)`, quantified again; the checks
 * below read escapes one character at a time and would take the quoted `)` for a group's end.
 */
export function unquote(p: string): string {
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    if (p[i + 1] !== 'Q') {
      out += c + (p[i + 1] ?? '');
      i++;
      continue;
    }
    let end = p.indexOf('\\E', i + 2);
    if (end < 0) end = p.length;
    for (const q of p.slice(i + 2, end)) out += /[A-Za-z0-9]/.test(q) ? q : `\\${q}`;
    i = end + 1;
  }
  return out;
}

/** The repetition a quantifier of length `q` at `i` allows, for costing: {n,m} m, {n} and {n,} n + 1, else 1. */
function repeatOf(p: string, i: number, q: number): number {
  if (p[i] !== '{') return p[i] === '?' ? 1 : 2;
  const [lo, hi] = p.slice(i + 1, i + q - 1).split(',');
  return hi === undefined ? Number(lo) : hi === '' ? Number(lo) + 1 : Number(hi);
}

/**
 * The cost of a pattern (already unquoted): the sum of its atoms' weights, each multiplied by the
 * repetition of every quantifier that applies to it (its own and its enclosing groups'). Over-counts
 * alternations (summed, though one branch matches): a bound, not a measure.
 */
export function patternCost(p: string): number {
  const groups: number[] = [0]; // cost so far of each open group; [0] is the pattern
  let last = 0; // cost of the atom (or group) before position i, which a quantifier multiplies
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    const q = quantifierAt(p, i);
    if (q > 0) {
      groups[groups.length - 1]! += last * (repeatOf(p, i, q) - 1);
      last *= repeatOf(p, i, q);
      i += q - 1;
      if (p[i + 1] === '?' || p[i + 1] === '+') i++;
      continue;
    }
    let weight = 1;
    if (c === '\\') {
      const n = p[i + 1];
      if (n === 'p' || n === 'P') {
        weight = PROPERTY_CLASS_WEIGHT;
        if (p[i + 2] === '{') i = (p.indexOf('}', i) + 1 || p.length) - 1;
        else i += 2;
      } else i++;
    } else if (c === '[') {
      const start = i;
      i = classEnd(p, i);
      if (/\\[pP]/.test(p.slice(start, i))) weight = PROPERTY_CLASS_WEIGHT;
    } else if (c === '(') {
      groups.push(0);
      i = groupSyntaxEnd(p, i);
      last = 0;
      continue;
    } else if (c === ')') {
      last = groups.length > 1 ? groups.pop()! : 0;
      groups[groups.length - 1]! += last;
      continue;
    } else if (c === '|' || c === '^' || c === '$') {
      last = 0;
      continue;
    }
    groups[groups.length - 1]! += weight;
    last = weight;
  }
  return groups.reduce((a, b) => a + b, 0);
}

/** The cost of a rule's pattern as checkScrubPattern counts it (a drain's rules are bounded together too). */
export const scrubRuleCost = (pattern: string): number => patternCost(unquote(pattern));

const BACKREFERENCE = /\\[1-9]|\\k</;
const LOOKBEHIND = /\(\?<[=!]/;

export function checkScrubPattern(pattern: string, flags = ''): ScrubRuleCheck {
  if (pattern.length === 0) return { ok: false, reason: 'pattern must not be empty' };
  if (pattern.length > MAX_SCRUB_PATTERN) return { ok: false, reason: `pattern exceeds ${MAX_SCRUB_PATTERN} characters` };
  const literal = unquote(pattern);
  if (BACKREFERENCE.test(literal)) return { ok: false, reason: 'backreferences are not allowed' };
  if (LOOKBEHIND.test(literal)) return { ok: false, reason: 'lookbehind is not allowed' };
  if (hasNestedQuantifier(literal)) return { ok: false, reason: 'nested quantifiers are not allowed' };
  const cost = patternCost(literal);
  if (cost > MAX_SCRUB_RULE_COST) {
    return { ok: false, reason: `pattern costs ${cost} (atoms times their repetition counts; at most ${MAX_SCRUB_RULE_COST})` };
  }
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

/** The index of the `]` closing the character class that opens at `i` (a leading `^` or `]` is part of it). */
function classEnd(p: string, i: number): number {
  i++;
  if (p[i] === '^') i++;
  if (p[i] === ']') i++;
  while (i < p.length && p[i] !== ']') i += p[i] === '\\' ? 2 : 1;
  return i;
}

/**
 * The last index of a group's opening syntax at `i`, which is not a quantifier:
 * (  (?:  (?i:  (?=  (?!  (?<=  (?<!  (?<name>  (?P<name>
 */
function groupSyntaxEnd(p: string, i: number): number {
  if (p[i + 1] !== '?') return i;
  let j = i + 2;
  if (p[j] === '<' && (p[j + 1] === '=' || p[j + 1] === '!')) j += 2;
  else if (p[j] === '<' || (p[j] === 'P' && p[j + 1] === '<')) j = p.indexOf('>', j) + 1 || p.length;
  else {
    while (j < p.length && /[A-Za-z-]/.test(p[j]!)) j++;
    if (p[j] === ':' || p[j] === '=' || p[j] === '!') j++;
  }
  return j - 1;
}
