/**
 * Scrubbing of response excerpts: the built-in credential patterns of
 * scrubber.ts, plus the exact values this service itself sent (a drain's
 * header values, a verification token), which a destination may echo back.
 */
import { SCRUBBED, scrubBuiltin } from './scrubber.js';

export { SCRUBBED, scrubBuiltin };

export function scrubExcerpt(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join(SCRUBBED);
  // A destination's answer may hold NUL bytes, which Postgres text cannot: stored as U+FFFD, or the
  // delivery record's write would fail, and be retried, forever (holding the batch's offsets).
  return scrubBuiltin(out).text.replaceAll('\u0000', '\uFFFD');
}
