import { describe, expect, it } from 'vitest';
import { AgentResources } from '../../../src/pipeline/pipeline.js';
import { resourceKey } from '../../../src/model/resource.js';
import { bucketOf } from '../../../src/modules/drains/tables/backlog-pages.js';
import type { AgentRecord } from '../../../src/model/record.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';
import { drainRow, pipelineFor } from './fixture.js';

const record = (p: Partial<AgentRecord>): AgentRecord => ({
  id: 'r', orgId: 'o', agentId: 'agt_a', agentName: 'a', environment: 'production', source: 'mcp', event: 'x', severity: 'info',
  timestamp: '2026-11-30T00:00:00.000Z', executionId: 'e', ...p,
});

describe('AgentResources (one resource key an agent, not one a record)', () => {
  it("answers resourceKey's key whatever changed between an agent's records, past the agents it keeps", () => {
    const resources = new AgentResources();
    let seed = 3;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    for (let i = 0; i < 60_000; i++) {
      const r = record({
        agentId: `agt_${rand(20_000)}`, agentName: ['a', 'b', 'a\u0000b'][rand(3)]!, environment: rand(2) ? 'production' : 'sandbox',
        orgId: rand(4) ? 'o' : 'o2', ...(rand(3) ? { agentVersion: ['1', '2', ''][rand(3)]! } : {}),
      });
      expect(resources.of(r).key).toBe(resourceKey(r));
    }
  });

  it('keeps the same entry for an unchanged agent, and another for the same agent id under another organization', () => {
    const resources = new AgentResources();
    const a = resources.of(record({}));
    expect(resources.of(record({ id: 'other' }))).toBe(a);
    expect(resources.of(record({ agentVersion: '2' })).key).toBe(resourceKey(record({ agentVersion: '2' })));
    expect(resources.of(record({ orgId: 'o2' }))).not.toBe(a);
  });

  it("parks each record with its resource's JSON and that JSON's bucket, chunk after chunk, as agents change", () => {
    const p = pipelineFor([drainRow('paused', { state: 'paused', pauseReason: 'manual' })]);
    const agents = Array.from({ length: 40 }, (_, i) => ({ id: `agt_${i}`, name: `bot-${i}` }));
    for (let chunk = 0; chunk < 3; chunk++) {
      // The second chunk renames every agent: their resources (and so their buckets) change.
      const named = agents.map((a) => ({ ...a, name: chunk === 1 ? `${a.name}-renamed` : a.name }));
      p.route([...syntheticRecords(200, { orgs: [{ orgId: 'org_acme', agents: named }], seed: chunk })].map((r) => JSON.stringify(r)));
    }
    const parked = p.accounted.flatMap((a) => a.backlog ?? []);
    expect(parked).toHaveLength(600);
    const renamed = parked.filter((r) => JSON.parse(r.resourceJson)['service.name'].endsWith('-renamed'));
    expect(renamed).toHaveLength(200);
    for (const r of parked) expect(r.bucket).toBe(bucketOf(r.resourceJson));
  });
  it('parks an agent id seen under two organizations in one chunk with each organization\'s resource', () => {
    const p = pipelineFor([
      drainRow('paused_a', { state: 'paused', pauseReason: 'manual' }),
      drainRow('paused_b', { orgId: 'org_other', state: 'paused', pauseReason: 'manual' }),
    ]);
    const agents = [{ id: 'agt_shared', name: 'bot' }];
    p.route([...syntheticRecords(100, { orgs: [{ orgId: 'org_acme', agents }, { orgId: 'org_other', agents }], seed: 5 })].map((r) => JSON.stringify(r)));
    const parked = p.accounted.flatMap((a) => a.backlog ?? []);
    expect(new Set(parked.map((r) => r.orgId))).toEqual(new Set(['org_acme', 'org_other']));
    for (const r of parked) {
      expect(JSON.parse(r.resourceJson)['service.namespace']).toBe(r.orgId);
      expect(r.bucket).toBe(bucketOf(r.resourceJson));
    }
  });
});
