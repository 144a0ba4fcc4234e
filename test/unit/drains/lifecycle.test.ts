/** The drain's state table (spec 01 part 3), event by event and state by state. */
import { describe, expect, it } from 'vitest';
import { INITIAL_STATE, nextState, type DrainEvent } from '../../../src/drains/lifecycle.js';
import type { DrainState } from '../../../src/model/drain.js';

const ENDPOINT = 'https://logs.example.com/in';
const drain = (state: DrainState, o: { pauseReason?: string | null; verifiedFor?: string | null } = {}) => ({
  state,
  pauseReason: o.pauseReason ?? null,
  endpoint: ENDPOINT,
  verifiedAt: o.verifiedFor === null || o.verifiedFor === undefined ? null : new Date(),
  verification: o.verifiedFor ? { attemptedAt: '', outcome: 'ok', endpoint: o.verifiedFor } : null,
});
const to = (d: ReturnType<typeof drain>, e: DrainEvent) => nextState(d, e)?.state;

describe('drain lifecycle', () => {
  it('starts waiting for verification, and a verification starts delivery only from there', () => {
    expect(INITIAL_STATE).toBe('pending_verification');
    expect(to(drain('pending_verification'), 'verified')).toBe('healthy');
    expect(to(drain('paused', { pauseReason: 'manual' }), 'verified')).toBeUndefined();
    expect(to(drain('degraded'), 'verified')).toBeUndefined();
  });

  it('sends every drain back to verification when its endpoint changes', () => {
    for (const s of ['pending_verification', 'healthy', 'degraded', 'paused'] as const) {
      expect(nextState(drain(s, { pauseReason: s === 'paused' ? 'manual' : null }), 'endpoint_changed')).toMatchObject({ state: 'pending_verification', pauseReason: null });
    }
  });

  it('resumes into degraded only with its own endpoint verified, never straight to healthy', () => {
    expect(to(drain('paused', { pauseReason: 'manual', verifiedFor: ENDPOINT }), 'resumed')).toBe('degraded');
    expect(to(drain('paused', { pauseReason: 'manual', verifiedFor: 'https://old.example.com/in' }), 'resumed')).toBe('pending_verification');
    expect(to(drain('paused', { pauseReason: 'manual' }), 'resumed')).toBe('pending_verification');
    expect(to(drain('healthy'), 'resumed')).toBeUndefined();
  });

  it('pauses by hand from any state, by quota from any but paused; the reset undoes only a quota pause', () => {
    expect(nextState(drain('healthy'), 'paused_manually')).toMatchObject({ state: 'paused', pauseReason: 'manual' });
    expect(nextState(drain('pending_verification'), 'paused_by_quota')).toMatchObject({ state: 'paused', pauseReason: 'quota' });
    expect(to(drain('paused', { pauseReason: 'manual' }), 'paused_by_quota')).toBeUndefined();
    expect(to(drain('paused', { pauseReason: 'quota', verifiedFor: ENDPOINT }), 'quota_reset')).toBe('degraded');
    expect(to(drain('paused', { pauseReason: 'manual', verifiedFor: ENDPOINT }), 'quota_reset')).toBeUndefined();
    // The reset is a resume: a drain whose proof belongs to a previous endpoint waits for verification again.
    expect(to(drain('paused', { pauseReason: 'quota', verifiedFor: 'https://old.example.com/in' }), 'quota_reset')).toBe('pending_verification');
    expect(to(drain('paused', { pauseReason: 'quota' }), 'quota_reset')).toBe('pending_verification');
  });

  it('moves between healthy and degraded on attempt streaks only, never touching a paused or unverified drain', () => {
    expect(to(drain('healthy'), 'attempts_failed')).toBe('degraded');
    expect(to(drain('degraded'), 'attempts_succeeded')).toBe('healthy');
    for (const s of ['paused', 'pending_verification'] as const) {
      expect(to(drain(s), 'attempts_failed')).toBeUndefined();
      expect(to(drain(s), 'attempts_succeeded')).toBeUndefined();
    }
    expect(nextState(drain('healthy'), 'attempts_failed')!.from).toEqual(['healthy']);
  });
});
