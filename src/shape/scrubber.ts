/**
 * Scrubbing: a drain's scrub rules and the built-in credential patterns,
 * compiled once per drain configuration into ONE RE2 alternation (one pass
 * per string rather than one per rule), applied to a record's body and
 * string attributes. Every match becomes `[scrubbed]` and counts as a hit.
 * RE2 matches in linear time, so no pattern or input can make it backtrack,
 * and nothing here is worse than linear in the length of a string.
 *
 * Semantics of the single alternation: at a given position the first
 * alternative that matches wins (RE2 is leftmost-first, like JS), so the
 * built-ins come first, then the customer rules in their order. A rule that
 * can match the empty string (`x*`) is refused at create time and skipped
 * here: an empty match has nothing to scrub and would shadow later rules.
 *
 * Replacement uses RE2's native string replacement, never a JS callback:
 * node-re2 converts offsets between UTF-16 and UTF-8 from the start of the
 * string on every callback, which makes a callback replace quadratic in the
 * number of matches (200,000 matches in 600 KB took 80 s; this takes 0.1 s).
 */
import RE2 from 're2';
import type { ScrubRule } from '../model/drain.js';
import type { DeliveredRecord } from './delivered-record.js';
import { scrubRuleCost } from '../model/scrub-rules.js';

export const SCRUBBED = '[scrubbed]';

/** Named group holding a bearer token's prefix, kept in the output: `Bearer [scrubbed]`. */
const BEARER_GROUP = 'logdrain_bearer_prefix';

/**
 * Built-in patterns: bearer tokens, signing secrets and API-key-like
 * strings, case-insensitive.
 */
const BUILTIN = `(?i:(?P<${BEARER_GROUP}>bearer\\s+)[A-Za-z0-9._~+/=-]{8,}|whsec_[A-Za-z0-9+/=]{8,}|\\b(?:sk|pk|lk|rk|api|key|token)[_-][A-Za-z0-9_-]{12,})`;
/**
 * The same built-ins for V8's engine, used when a drain has no customer rules (the common case):
 * they are our own patterns, each a literal prefix followed by one character class, so they
 * cannot backtrack badly, and V8 runs them several times faster than a call into RE2. RE2's `\s`
 * is exactly [\t\n\f\r ]; `\b` is ASCII in both.
 */
const BUILTIN_V8 = '(bearer[\\t\\n\\f\\r ]+)[A-Za-z0-9._~+/=-]{8,}|whsec_[A-Za-z0-9+/=]{8,}|\\b(?:sk|pk|lk|rk|api|key|token)[_-][A-Za-z0-9_-]{12,}';
/** The shortest text a built-in pattern can match (`whsec_` + 8), in UTF-16 units. */
const BUILTIN_MIN_LENGTH = 14;

/**
 * With customer rules no minimum length is known, so results for short
 * strings (the usual attribute values: tool names, ids) are memoised per
 * scrubber instead, which saves native calls per value. Bounded: cleared
 * when full.
 */
const MEMO_MAX_LENGTH = 32;
/**
 * The most scrubbing work (characters of text times the rules' cost, scrub-rules.ts) a record may
 * cost on the thread that routes records. RE2 is linear, but its time grows with the program: at
 * the cost bounds, 256 KB of unlucky text took 2.7 s here, 16 KB 180 ms (about 10 ns a unit).
 * This bound keeps the worst inline scrub near 2 ms; heavier records are scrubbed off that thread
 * (scrub-pool.ts), so no record stalls the others. Ordinary records (a few KB, rules of cost
 * tens) stay far below it.
 */
export const INLINE_SCRUB_WORK = 200_000;
const MEMO_MAX_ENTRIES = 256;

export interface Scrubber {
  /** The customer rules it was compiled from (a scrub worker compiles the same). */
  readonly rules: readonly ScrubRule[];
  /** The customer rules' cost together (scrub-rules.ts); 0 with built-in patterns only. */
  readonly cost: number;
  scrubText(text: string): { text: string; hits: number };
  /** Scrubs `body` and string attributes in place; returns the number of matches replaced. */
  scrubRecord(record: DeliveredRecord): number;
  /** Ids of customer rules skipped: RE2 would not compile them, or they match the empty string (both refused at create time, so normally none). */
  readonly skipped: readonly string[];
}

/**
 * A customer pattern as a non-capturing group carrying its own flags, for
 * the shared alternation; null when RE2 refuses it or it matches the empty
 * string. The pattern is compiled alone first (as `checkScrubPattern` does):
 * a pattern with unbalanced parentheses such as `a)|(b` would otherwise
 * escape its group.
 */
function customerPart(rule: ScrubRule): string | null {
  if (typeof rule.pattern !== 'string' || rule.pattern.length === 0) return null;
  // `u` is always on (the whole alternation is unicode); RE2 has no `(?u:...)`.
  const flags = [...new Set((rule.flags ?? '').replace(/[^ims]/g, ''))].sort().join('');
  const source = flags ? `(?${flags}:${rule.pattern})` : `(?:${rule.pattern})`;
  try {
    new RE2(rule.pattern, `${flags}u`);
    return new RE2(source, 'u').test('') ? null : source;
  } catch {
    return null;
  }
}

function tryCompile(source: string): RE2 | null {
  try {
    return new RE2(source, 'gu');
  } catch {
    return null;
  }
}

/**
 * One global alternation of all sources. Parts that each compile may still
 * fail together (two rules using the same group name, RE2's program size
 * limit): then they are packed first-fit into as few alternations as
 * possible, each one a pass, rather than dropping a valid rule.
 */
function compilePasses(sources: readonly string[]): RE2[] {
  const one = tryCompile(sources.join('|'));
  if (one) return [one];
  const groups: { sources: string[]; re: RE2 }[] = [];
  for (const s of sources) {
    let placed = false;
    for (const g of groups) {
      const re = tryCompile([...g.sources, s].join('|'));
      if (re) {
        g.sources.push(s);
        g.re = re;
        placed = true;
        break;
      }
    }
    if (!placed) groups.push({ sources: [s], re: new RE2(s, 'gu') });
  }
  return groups.map((g) => g.re);
}

interface Pass {
  re: RE2;
  replacement: string;
}

export function compileScrubber(rules: readonly ScrubRule[] | null): Scrubber {
  const skipped: string[] = [];
  const customer: string[] = [];
  for (const rule of rules ?? []) {
    const part = customerPart(rule);
    if (part === null) skipped.push(String(rule.id));
    else customer.push(part);
  }
  // The built-ins come first and stay in the first pass (first-fit packing),
  // the only pass that has the bearer group to refer to.
  const passes: Pass[] = compilePasses([BUILTIN, ...customer]).map((re, i) => ({
    re,
    replacement: i === 0 ? `$<${BEARER_GROUP}>${SCRUBBED}` : SCRUBBED,
  }));
  // An empty string never yields a match (empty matches are excluded).
  const minLength = customer.length > 0 ? 1 : BUILTIN_MIN_LENGTH;

  let hits = 0;
  // `test` first: most strings hold no secret, and RE2's test runs its DFA
  // without building anything; `match` then counts, `replace` rewrites.
  // Global `match` and `replace` start at 0 and leave lastIndex at 0; a
  // failed global `test` leaves it at 0 too.
  const v8 = customer.length === 0 ? new RegExp(BUILTIN_V8, 'gi') : null;
  const v8Replacer = (_match: string, bearer: string | undefined): string => {
    hits++;
    return bearer === undefined ? SCRUBBED : bearer + SCRUBBED;
  };
  const scan = (text: string): string => {
    if (v8 !== null) {
      v8.lastIndex = 0;
      if (!v8.test(text)) return text;
      v8.lastIndex = 0;
      return text.replace(v8, v8Replacer);
    }
    let out = text;
    for (const { re, replacement } of passes) {
      if (!re.test(out)) continue;
      re.lastIndex = 0;
      hits += (re.match(out) ?? []).length;
      out = re.replace(out, replacement);
    }
    return out;
  };

  const memo = customer.length > 0 ? new Map<string, { text: string; hits: number }>() : null;
  const scrub = (text: string): string => {
    if (text.length < minLength) return text;
    if (memo === null || text.length > MEMO_MAX_LENGTH) return scan(text);
    const known = memo.get(text);
    if (known !== undefined) {
      hits += known.hits;
      return known.text;
    }
    const before = hits;
    const out = scan(text);
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(text, { text: out, hits: hits - before });
    return out;
  };

  const cost = (rules ?? []).reduce((n, r) => n + (typeof r.pattern === 'string' ? scrubRuleCost(r.pattern) : 0), 0);
  return {
    rules: rules ?? [],
    cost,
    skipped,
    scrubText(text) {
      hits = 0;
      const out = scrub(text);
      return { text: out, hits };
    },
    scrubRecord(record) {
      hits = 0;
      const body = record.body;
      if (body !== undefined) {
        const out = scrub(body);
        if (out !== body) record.body = out;
      }
      const attrs = record.attributes;
      for (const k in attrs) {
        const v = attrs[k];
        if (typeof v === 'string') {
          const out = scrub(v);
          if (out !== v) attrs[k] = out;
        }
      }
      return hits;
    },
  };
}

const builtinOnly = compileScrubber(null);

/** Built-in patterns only (response excerpts). */
export const scrubBuiltin = (text: string): { text: string; hits: number } => builtinOnly.scrubText(text);

/** Characters a record's scrub reads: its body and its string attributes. */
export function scrubbedTextLength(r: { message?: string | undefined; body?: string | undefined; attributes?: Record<string, unknown> | undefined }): number {
  let n = (r.body ?? r.message ?? '').length;
  const attrs = r.attributes;
  if (attrs) for (const k in attrs) {
    const v = attrs[k];
    if (typeof v === 'string') n += v.length;
  }
  return n;
}

/**
 * Withholds what could not be scrubbed in time: the body and every string attribute replaced by
 * the marker (one hit each). Never sent unscrubbed.
 */
export function withholdRecord(record: DeliveredRecord): number {
  let hits = 0;
  if (record.body !== undefined && record.body.length > 0) {
    record.body = SCRUBBED;
    hits++;
  }
  for (const k in record.attributes) {
    const v = record.attributes[k];
    if (typeof v === 'string' && v.length > 0) {
      record.attributes[k] = SCRUBBED;
      hits++;
    }
  }
  return hits;
}
