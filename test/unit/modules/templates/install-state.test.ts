/** The install and setup moves of the templates family's state machine (state.ts): every move their table lists, and the ones it refuses. */
import { describe, expect, it } from 'vitest';
import { installTransition, isRefused, setupTransition } from '../../../../src/modules/templates/state.js';

describe('install transitions', () => {
  it('a first install applies or is refused; it is never already current or failed', () => {
    expect(installTransition(null, { type: 'applied' })).toBe('installed');
    expect(isRefused(installTransition(null, { type: 'unchanged' }))).toBe(true);
    expect(isRefused(installTransition(null, { type: 'apply_failed' }))).toBe(true);
    expect(isRefused(installTransition(null, { type: 'removed' }))).toBe(true);
  });

  it('an install moves to installed, already_current or apply_failed from any status, and removal ends it', () => {
    for (const from of ['installed', 'already_current', 'apply_failed'] as const) {
      expect(installTransition(from, { type: 'applied' })).toBe('installed');
      expect(installTransition(from, { type: 'unchanged' })).toBe('already_current');
      expect(installTransition(from, { type: 'apply_failed' })).toBe('apply_failed');
      expect(installTransition(from, { type: 'removed' })).toBeNull();
    }
  });
});

describe('setup transitions', () => {
  it('records a started or failed hook, starts a retry unless the hook started already', () => {
    expect(setupTransition(null, { type: 'started', runId: 'wfr_1' })).toEqual({ status: 'ok', workflowRunId: 'wfr_1' });
    expect(setupTransition(null, { type: 'failed', code: 'workflow-not-materialized', error: 'no' })).toEqual({ status: 'failed', code: 'workflow-not-materialized', error: 'no' });
    expect(setupTransition(null, { type: 'retried' })).toBe('start');
    expect(setupTransition({ status: 'failed', code: 'start-refused', error: 'x' }, { type: 'retried' })).toBe('start');
    expect(setupTransition({ status: 'ok', workflowRunId: 'wfr_1' }, { type: 'retried' })).toEqual({ refused: 'already-started' });
  });
});
