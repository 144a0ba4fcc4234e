/** The deploy state machine (state.ts, its deploy section) and the deploy session's deep merge. */
import { describe, expect, it } from 'vitest';
import { DEPLOY_STATUSES, deploySourcesOf, deployTransition, isDeployTerminal, mustDeployTransition, type DeployEvent } from '../../../../src/modules/templates/state.js';
import { deepMerge } from '../../../../src/modules/templates/deploy-repository.js';

const EVENTS: DeployEvent[] = [{ type: 'mint' }, { type: 'installed' }, { type: 'refused' }, { type: 'removed' }, { type: 'fail' }];

describe('deploy state machine', () => {
  it('mints into running, at the install stage', () => {
    expect(deployTransition(null, { type: 'mint' })).toEqual({ status: 'running', stage: 'install' });
    for (const s of DEPLOY_STATUSES) expect(deployTransition(s, { type: 'mint' })).toBeUndefined();
  });

  it('ends a running deploy succeeded, or refused through rollback_pending to rolled_back', () => {
    expect(deployTransition('running', { type: 'installed' })).toEqual({ status: 'succeeded', stage: 'done' });
    expect(deployTransition('running', { type: 'refused' })).toEqual({ status: 'rollback_pending', stage: 'rollback' });
    expect(deployTransition('rollback_pending', { type: 'removed' })).toEqual({ status: 'rolled_back', stage: 'done' });
    expect(deployTransition('rollback_pending', { type: 'installed' })).toBeUndefined();
    expect(deployTransition('running', { type: 'removed' })).toBeUndefined();
  });

  it('fails from either status with work left, and moves nothing out of an end', () => {
    expect(deploySourcesOf({ type: 'fail' }).sort()).toEqual(['rollback_pending', 'running']);
    for (const s of DEPLOY_STATUSES.filter(isDeployTerminal)) {
      for (const e of EVENTS) expect(deployTransition(s, e), `${s} ${e.type}`).toBeUndefined();
    }
    expect(DEPLOY_STATUSES.filter(isDeployTerminal).sort()).toEqual(['failed', 'rolled_back', 'succeeded']);
  });

  it('refuses a move that is not allowed as a programming error', () => {
    expect(() => mustDeployTransition('succeeded', { type: 'installed' })).toThrow(/installed is not a move from succeeded/);
  });
});

describe('deploy session merge', () => {
  it('merges objects at every depth; arrays, scalars and null replace', () => {
    const base = { a: { b: 1, c: { d: 2 } }, list: [1, 2], keep: 'x' };
    expect(deepMerge(base, { a: { c: { e: 3 } }, list: [3], n: null })).toEqual({ a: { b: 1, c: { d: 2, e: 3 } }, list: [3], keep: 'x', n: null });
    expect(deepMerge(base, { a: null })).toEqual({ a: null, list: [1, 2], keep: 'x' });
    expect(base).toEqual({ a: { b: 1, c: { d: 2 } }, list: [1, 2], keep: 'x' });
  });

  it('keeps a __proto__ member a member', () => {
    const merged = deepMerge({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.keys(merged)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
