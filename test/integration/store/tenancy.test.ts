/**
 * The store kernel's organizations and agents made and removed by the API (tenancy-repo.ts), on
 * both stores: created rows read back through the credential lookups, a removal takes the
 * families' rows of the agent with it, and a unit of work that fails leaves nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import { tenancyEpoch } from '../../../src/store/change-epochs.js';

describe.each(STORE_KINDS)('tenancy on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
    await store.sql.query(`insert into users (id, email) values ('usr_t', 't@t.test')`);
  });
  afterAll(async () => dispose());

  it('creates an organization with its admin, and agents in it', async () => {
    const org = await store.tenancy.createOrg({ name: 'Personal', adminUserId: 'usr_t' });
    expect(org.id).toMatch(/^org_/);
    expect(await store.auth.org(org.id)).toEqual({ id: org.id, name: 'Personal', plan: 'standard', archived: false });
    expect(await store.auth.roleIn('usr_t', org.id)).toBe('admin');

    const agent = await store.tenancy.createAgent({ orgId: org.id, name: 'minted', visibility: 'org' });
    expect(agent.id).toMatch(/^agt_/);
    expect(await store.auth.agent(agent.id)).toEqual({ id: agent.id, orgId: org.id, name: 'minted', visibility: 'org', version: null });
    const named = await store.tenancy.createAgent({ id: 'agt_named', orgId: org.id, name: 'named', visibility: 'private', version: '3' });
    expect(named).toMatchObject({ id: 'agt_named', version: '3', baseAgent: false });
    expect((await store.tenancy.agentsOf(org.id)).map((a) => a.id)).toEqual([agent.id, 'agt_named']);
  });

  it('refuses an agent of an organization that does not exist', async () => {
    await expect(store.tenancy.createAgent({ orgId: 'org_none', name: 'x', visibility: 'org' })).rejects.toThrow();
  });

  it('removes an agent of its organization only, with the rows that reference it', async () => {
    const org = await store.tenancy.createOrg({ name: 'Removal' });
    const agent = await store.tenancy.createAgent({ orgId: org.id, name: 'doomed', visibility: 'org' });
    // A family's row referencing the agent, as the families' tables do (`on delete cascade`).
    await store.sql.query('create table if not exists tenancy_probe (agent_id text not null references agents(id) on delete cascade)');
    await store.sql.query('insert into tenancy_probe (agent_id) values ($1)', [agent.id]);
    expect(await store.tenancy.removeAgent('org_other', agent.id)).toBe(false);
    expect(await store.auth.agent(agent.id)).toBeDefined();
    const before = tenancyEpoch();
    expect(await store.tenancy.removeAgent(org.id, agent.id)).toBe(true);
    expect(tenancyEpoch()).toBeGreaterThan(before);
    expect(await store.auth.agent(agent.id)).toBeUndefined();
    expect(await store.sql.query('select 1 from tenancy_probe where agent_id = $1', [agent.id])).toEqual([]);
    expect(await store.tenancy.removeAgent(org.id, agent.id)).toBe(false);
  });

  it('creates nothing when the unit of work holding it fails, and moves the counter again when it ends', async () => {
    const org = await store.tenancy.createOrg({ name: 'Rollback' });
    let inside = 0;
    await expect(store.unitOfWork(async (tx) => {
      await tx.tenancy.createAgent({ id: 'agt_rolled_back', orgId: org.id, name: 'r', visibility: 'org' });
      inside = tenancyEpoch();
      throw new Error('refused');
    })).rejects.toThrow('refused');
    expect(tenancyEpoch()).toBeGreaterThan(inside);
    expect(await store.auth.agent('agt_rolled_back')).toBeUndefined();
  });
});
