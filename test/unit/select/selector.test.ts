import { describe, expect, it } from 'vitest';
import { compileSelector, sampledIn, SAMPLED_OUT, SELECTED, SKIP } from '../../../src/select/selector.js';
import type { Selectors } from '../../../src/model/drain.js';
import type { AgentRecord } from '../../../src/model/record.js';

const base: Selectors = { sources: null, minSeverity: 'info', agents: '*', environments: ['production'], includeContent: false };
const rec = (p: Partial<AgentRecord> = {}): AgentRecord => ({
  id: 'r', orgId: 'o', agentId: 'agt_a', agentName: 'a', environment: 'production', source: 'mcp', event: 'call',
  severity: 'info', timestamp: '2026-01-01T00:00:00Z', executionId: 'exe_1', ...p,
});

describe('compileSelector', () => {
  it('by default takes every source but the content sources, at info and above, in production', () => {
    const s = compileSelector(base, null);
    expect(s(rec())).toBe(SELECTED);
    expect(s(rec({ source: 'a_new_source' }))).toBe(SELECTED);
    expect(s(rec({ source: 'user_message' }))).toBe(SKIP);
    expect(s(rec({ source: 'agent_response' }))).toBe(SKIP);
    expect(s(rec({ severity: 'debug' }))).toBe(SKIP);
    expect(s(rec({ severity: 'error' }))).toBe(SELECTED);
    expect(s(rec({ environment: 'sandbox' }))).toBe(SKIP);
  });

  it('honours explicit sources, agents and environments', () => {
    const s = compileSelector({ ...base, sources: ['skill', 'user_message'], agents: ['agt_b'], environments: ['sandbox'], minSeverity: 'warn' }, null);
    expect(s(rec({ source: 'skill', agentId: 'agt_b', environment: 'sandbox', severity: 'warn' }))).toBe(SELECTED);
    expect(s(rec({ source: 'user_message', agentId: 'agt_b', environment: 'sandbox', severity: 'error' }))).toBe(SELECTED);
    expect(s(rec({ source: 'mcp', agentId: 'agt_b', environment: 'sandbox', severity: 'warn' }))).toBe(SKIP);
    expect(s(rec({ source: 'skill', agentId: 'agt_a', environment: 'sandbox', severity: 'warn' }))).toBe(SKIP);
    expect(s(rec({ source: 'skill', agentId: 'agt_b', environment: 'sandbox', severity: 'info' }))).toBe(SKIP);
  });

  it('samples debug records by execution: the same decision every time, close to the rate', () => {
    const s = compileSelector({ ...base, minSeverity: 'debug' }, { debug: 0.25 });
    const verdicts = Array.from({ length: 4000 }, (_, i) => s(rec({ severity: 'debug', executionId: `exe_${i}` })));
    const kept = verdicts.filter((v) => v === SELECTED).length;
    // The rest are told apart from records the selectors do not want: they are counted as sampled out.
    expect(verdicts.filter((v) => v === SAMPLED_OUT).length).toBe(4000 - kept);
    expect(kept).toBeGreaterThan(850);
    expect(kept).toBeLessThan(1150);
    for (let i = 0; i < 50; i++) {
      const id = `exe_${i}`;
      const want = sampledIn(id, 0.25) ? SELECTED : SAMPLED_OUT;
      expect(s(rec({ severity: 'debug', executionId: id }))).toBe(want);
      expect(s(rec({ severity: 'debug', executionId: id, id: 'other' }))).toBe(want);
    }
    // Sampling never touches non-debug records.
    expect(s(rec({ severity: 'info', executionId: 'exe_x' }))).toBe(SELECTED);
  });
});
