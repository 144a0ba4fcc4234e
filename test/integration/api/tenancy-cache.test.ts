/**
 * The credential lookups the kernel keeps for a moment (kernel/auth.ts, CREDENTIAL_CACHE_MS) do
 * not outlive an agent the API removes or hide one it creates: the serving process's store writes
 * move the tenancy counter, and the next request reads the store again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../helpers/api-app.js';
import { hashToken } from '../../../src/security/token-hash.js';

describe('credential lookups and tenancy writes', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startApi({});
  });
  afterAll(async () => app?.stop());

  const versions = (agentId: string) => app.request('GET', `/developer/agents/${agentId}/persona/versions`, { token: 'sess_ann' });

  it('refuses a removed agent at once, though a request just read it', async () => {
    const agent = await app.store.tenancy.createAgent({ orgId: 'org_acme', name: 'short-lived', visibility: 'org' });
    // Created a moment after a request looked for it and found nothing: found at once.
    expect((await versions(agent.id)).status).toBe(200);
    expect((await versions(agent.id)).status).toBe(200);
    expect(await app.store.tenancy.removeAgent('org_acme', agent.id)).toBe(true);
    const after = await versions(agent.id);
    // The persona routes answer an agent the credential cannot see as unknown (spec 03 part 7).
    expect(after.status).toBe(404);
    expect(after.body.message).toBe('SubAgent not found');
  });

  it('finds an agent created right after a request was refused for it', async () => {
    const id = `agt_late_${Date.now()}`;
    expect((await versions(id)).status).toBe(404);
    await app.store.tenancy.createAgent({ id, orgId: 'org_acme', name: 'late', visibility: 'org' });
    expect((await versions(id)).status).toBe(200);
  });

  it('lets a person act in a personal organization created for it at once', async () => {
    await app.store.sql.query(`insert into users (id, email) values ('usr_solo', 'solo@solo.test') on conflict do nothing`);
    await app.store.sql.query(`insert into sessions (token_hash, user_id, revoked) values ($1, 'usr_solo', false) on conflict do nothing`, [hashToken('sess_solo')]);
    const org = await app.store.tenancy.createOrg({ name: 'Solo', adminUserId: 'usr_solo' });
    const agent = await app.store.unitOfWork((tx) => tx.tenancy.createAgent({ orgId: org.id, name: 'solo-bot', visibility: 'org' }));
    const r = await app.request('GET', `/developer/agents/${agent.id}/persona/versions`, { token: 'sess_solo' });
    expect(r.status).toBe(200);
  });
});
