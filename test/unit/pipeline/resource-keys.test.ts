import { describe, expect, it } from 'vitest';
import { ResourceKeys } from '../../../src/pipeline/pipeline.js';
import { resourceKey } from '../../../src/model/resource.js';
import type { AgentRecord } from '../../../src/model/record.js';

const record = (p: Partial<AgentRecord>): AgentRecord => ({
  id: 'r', orgId: 'o', agentId: 'agt_a', agentName: 'a', environment: 'production', source: 'mcp', event: 'x', severity: 'info',
  timestamp: '2026-11-30T00:00:00.000Z', executionId: 'e', ...p,
});

describe('ResourceKeys (one resource key an agent, not one a record)', () => {
  it("answers resourceKey's key whatever changed between an agent's records", () => {
    const keys = new ResourceKeys();
    let seed = 3;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    for (let i = 0; i < 20_000; i++) {
      const r = record({
        agentId: `agt_${rand(5000)}`, agentName: ['a', 'b', 'a\u0000b'][rand(3)]!, environment: rand(2) ? 'production' : 'sandbox',
        ...(rand(3) ? { agentVersion: ['1', '2', ''][rand(3)]! } : {}),
      });
      expect(keys.of(r)).toBe(resourceKey(r));
    }
  });

  it('keeps the same string for an unchanged agent', () => {
    const keys = new ResourceKeys();
    const a = keys.of(record({}));
    expect(keys.of(record({ id: 'other' }))).toBe(a);
    expect(keys.of(record({ agentVersion: '2' }))).toBe(resourceKey(record({ agentVersion: '2' })));
  });
});
