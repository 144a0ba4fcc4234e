/**
 * The day and hour numbers (UTC) that usage, hourly counts and log partitions
 * are kept by: whole days or hours since the epoch.
 */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS);
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);
