/** `logdrain produce --agent`: the records' agent names come from `ID=NAME`, else the seed file, else the id. */
import { describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentsOf } from '../../../src/commands/produce.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

describe('produce --agent', () => {
  it('takes ID=NAME as given, and a bare id as its own name without a seed file', async () => {
    expect(await agentsOf(['agt_support=support-bot', 'agt_x'], undefined)).toEqual([
      { id: 'agt_support', name: 'support-bot' },
      { id: 'agt_x', name: 'agt_x' },
    ]);
    // A name may hold '=' itself: only the first one separates.
    expect(await agentsOf(['agt_a=a=b'], undefined)).toEqual([{ id: 'agt_a', name: 'a=b' }]);
  });

  it('names a bare id as the seed file does, with its version', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'produce-agents-'));
    try {
      const seed = join(dir, 'seed.json');
      await writeFile(seed, JSON.stringify({
        orgs: [{ id: 'org_acme', name: 'Acme' }],
        agents: [{ id: 'agt_support', orgId: 'org_acme', name: 'support-bot', version: '4' }, { id: 'agt_sales', orgId: 'org_acme', name: 'sales-bot' }],
        workflows: [],
      }));
      expect(await agentsOf(['agt_support', 'agt_sales', 'agt_sales=renamed', 'agt_unknown'], seed)).toEqual([
        { id: 'agt_support', name: 'support-bot', version: '4' },
        { id: 'agt_sales', name: 'sales-bot' },
        { id: 'agt_sales', name: 'renamed' },
        { id: 'agt_unknown', name: 'agt_unknown' },
      ]);
      // The records carry them.
      const [r] = [...syntheticRecords(1, { orgs: [{ orgId: 'org_acme', agents: await agentsOf(['agt_support'], seed) }] })];
      expect(r).toMatchObject({ agentId: 'agt_support', agentName: 'support-bot', agentVersion: '4' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses an empty id or name', async () => {
    await expect(agentsOf(['=x'], undefined)).rejects.toThrow('--agent =x: expected ID or ID=NAME');
    await expect(agentsOf(['agt_a='], undefined)).rejects.toThrow('expected ID or ID=NAME');
  });
});
