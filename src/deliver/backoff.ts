/**
 * Exponential backoff with full jitter, honouring a destination's
 * Retry-After when it asks for longer.
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
