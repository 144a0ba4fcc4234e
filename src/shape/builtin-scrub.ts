/**
 * Built-in scrubbing of credentials that must never travel in a delivery
 * excerpt or body: bearer tokens, signing secrets and API-key-like strings.
 */
const BUILTIN = /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}|whsec_[A-Za-z0-9+/=]{8,}|\b(?:sk|pk|lk|rk|api|key|token)[_-][A-Za-z0-9_-]{12,}/gi;

export const SCRUBBED = '[scrubbed]';

export function scrubBuiltin(text: string): { text: string; hits: number } {
  let hits = 0;
  const out = text.replace(BUILTIN, (_m, bearer: string | undefined) => {
    hits++;
    return bearer ? `${bearer}${SCRUBBED}` : SCRUBBED;
  });
  return { text: out, hits };
}

/** Removes each of `secrets` (values this service sent) and built-in patterns from `text`. */
export function scrubExcerpt(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join(SCRUBBED);
  return scrubBuiltin(out).text;
}
