/**
 * Exponential backoff with equal jitter, honouring a destination's
 * Retry-After when it asks for longer. Attempt n's ceiling is
 * min(maxMs, baseMs * 2^(n-1)); the wait is drawn uniformly from the upper
 * half of it, [ceiling / 2, ceiling], so a wait is never shorter than half
 * the ceiling, and then raised to Retry-After if that is longer.
 */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  random?: () => number;
}

export function backoffMs(attempt: number, opts: BackoffOptions, retryAfterMs?: number): number {
  const ceiling = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.min(attempt - 1, 30));
  const jittered = Math.round(ceiling / 2 + (opts.random ?? Math.random)() * (ceiling / 2));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
}
