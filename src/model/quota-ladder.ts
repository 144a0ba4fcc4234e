/**
 * The quota ladder (docs/delivery.md, "Quota"): a drain's daily use of its quota
 * (events and bytes delivered since 00:00 UTC, whichever is nearer its
 * limit) decides how much of its traffic it still takes.
 *
 *   below 80%   none        everything selected is delivered
 *   80% - 90%   drop_debug  debug records are dropped
 *   90% - 100%  drop_info   debug and info records are dropped
 *   100%        paused      the drain is paused (pauseReason `quota`, audit
 *                           `logs.drain.quota_paused`) until the day resets
 *
 * Records the ladder drops are accounted in `dropped` delivery records with
 * the reason `quota`.
 */
import type { Severity } from './drain.js';

export type Degradation = 'none' | 'drop_debug' | 'drop_info' | 'paused';

export interface Quota {
  eventsPerDay: number;
  bytesPerDay: number;
}

export interface Usage {
  events: number;
  bytes: number;
}

export function degradationFor(used: Usage, quota: Quota): Degradation {
  const ratio = Math.max(used.events / quota.eventsPerDay, used.bytes / quota.bytesPerDay);
  if (ratio >= 1) return 'paused';
  if (ratio >= 0.9) return 'drop_info';
  if (ratio >= 0.8) return 'drop_debug';
  return 'none';
}

export function admits(d: Degradation, severity: Severity): boolean {
  switch (d) {
    case 'none':
      return true;
    case 'drop_debug':
      return severity !== 'debug';
    case 'drop_info':
      return severity === 'warn' || severity === 'error';
    case 'paused':
      return false;
  }
}
