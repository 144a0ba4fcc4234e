/**
 * Scrubbing: a drain's scrub rules and the built-in credential patterns,
 * compiled once per drain configuration into ONE RE2 alternation (one pass
 * per string rather than one per rule), applied to a record's body and
 * string attributes. Every match becomes `[scrubbed]` and counts as a hit.
 * RE2 matches in linear time, so no pattern or input can make it backtrack.
 */
import RE2 from 're2';
import type { ScrubRule } from '../model/drain.js';
import type { DeliveredRecord } from './delivered-record.js';

export const SCRUBBED = '[scrubbed]';

/**
 * Built-in patterns. The bearer one comes first and captures its prefix
 * (group 1), which is kept: `Bearer [scrubbed]`.
 */
const BUILTIN = [
  '(Bearer\\s+)[A-Za-z0-9._~+/=-]{8,}',
  'whsec_[A-Za-z0-9+/=]{8,}',
  '(?i:\\b(?:sk|pk|lk|rk|api|key|token)[_-][A-Za-z0-9_-]{12,})',
];

export interface Scrubber {
  scrubText(text: string): { text: string; hits: number };
  /** Scrubs `body` and string attributes in place; returns the number of matches replaced. */
  scrubRecord(record: DeliveredRecord): number;
  /** Ids of customer rules RE2 would not compile (validated at create time, so normally none). */
  readonly skipped: readonly string[];
}

/** Wraps a customer pattern in a non-capturing group carrying its flags, for the shared alternation. */
function wrap(rule: ScrubRule): string {
  const flags = (rule.flags ?? '').replace(/[^ims]/g, '');
  return flags ? `(?${flags}:${rule.pattern})` : `(?:${rule.pattern})`;
}

export function compileScrubber(rules: readonly ScrubRule[] | null): Scrubber {
  const parts = [...BUILTIN];
  const skipped: string[] = [];
  for (const rule of rules ?? []) {
    const part = wrap(rule);
    try {
      new RE2(part, 'u');
      parts.push(part);
    } catch {
      skipped.push(rule.id);
    }
  }
  const re = new RE2(parts.join('|'), 'gu');
  let hits = 0;
  const replacer = (_match: string, bearer: string | undefined) => {
    hits++;
    return bearer ? bearer + SCRUBBED : SCRUBBED;
  };
  const scrub = (text: string): string => {
    re.lastIndex = 0;
    return text.replace(re as unknown as RegExp, replacer as (substring: string, ...args: unknown[]) => string);
  };

  return {
    skipped,
    scrubText(text) {
      hits = 0;
      const out = scrub(text);
      return { text: out, hits };
    },
    scrubRecord(record) {
      hits = 0;
      if (record.body !== undefined) record.body = scrub(record.body);
      const attrs = record.attributes;
      for (const k in attrs) {
        const v = attrs[k];
        if (typeof v === 'string') attrs[k] = scrub(v);
      }
      return hits;
    },
  };
}

const builtinOnly = compileScrubber(null);

/** Built-in patterns only (response excerpts). */
export const scrubBuiltin = (text: string): { text: string; hits: number } => builtinOnly.scrubText(text);
