/**
 * Receipt event ids on a store that had them before they were each organization's (migration
 * channels/002): a row takes its organization from its delivery; a row no delivery names is
 * dropped; afterwards the same provider and event id is claimed once per organization. On PGlite
 * and on real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../../src/store/store.js';
import { migrate } from '../../../../src/store/migrate.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { createChannelsRepo } from '../../../../src/modules/channels/repository.js';
import { storeKindsWithout } from '../../../helpers/stores.js';

const PER_ORG = 'channels/002-receipt-events-per-org';
const KINDS = storeKindsWithout(PER_ORG);

describe.each(KINDS)('receipt events upgrade on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  it('keys the events by organization, each from its delivery, and claims an id once per organization', async () => {
    expect(familyMigrations.map((m) => m.id)).toContain(PER_ORG);
    await store.sql.query(
      `insert into channel_deliveries (id, org_id, agent_id, channel, sender, recipient, provider, origin, status, history, created_at, updated_at)
       values ('dlv_a', 'org_a', 'agt_a', 'sms', 'sms:agt_a', '{}', 'vendor', 'channels_send', 'accepted', '[]', now(), now()),
              ('dlv_b', 'org_b', 'agt_b', 'sms', 'sms:agt_b', '{}', 'vendor', 'channels_send', 'accepted', '[]', now(), now())`,
    );
    await store.sql.query(
      `insert into channel_receipt_events (provider, event_id, delivery_id, received_at)
       values ('vendor', 'evt-a', 'dlv_a', now()), ('vendor', 'evt-b', 'dlv_b', now()),
              ('vendor', 'evt-inbound', null, now()), ('vendor', 'evt-gone', 'dlv_removed', now())`,
    );
    expect(await migrate(store.sql, familyMigrations)).toEqual([PER_ORG]);
    expect(await store.sql.query('select org_id, provider, event_id, delivery_id from channel_receipt_events order by event_id')).toEqual([
      { org_id: 'org_a', provider: 'vendor', event_id: 'evt-a', delivery_id: 'dlv_a' },
      { org_id: 'org_b', provider: 'vendor', event_id: 'evt-b', delivery_id: 'dlv_b' },
    ]);

    const repo = createChannelsRepo(store.sql);
    const at = new Date();
    // Seen before by its own organization: a duplicate; another organization's first use of it is not.
    expect(await repo.claimReceiptEvent('org_a', 'vendor', 'evt-a', 'dlv_a', at)).toBe(false);
    expect(await repo.claimReceiptEvent('org_b', 'vendor', 'evt-a', 'dlv_b', at)).toBe(true);
    expect(await repo.claimReceiptEvent('org_b', 'vendor', 'evt-a', 'dlv_b', at)).toBe(false);
    // A dropped row no longer stands in anyone's way.
    expect(await repo.claimReceiptEvent('org_a', 'vendor', 'evt-inbound', null, at)).toBe(true);
    expect(await repo.claimReceiptEvent('org_b', 'vendor', 'evt-inbound', null, at)).toBe(true);
    expect(await repo.claimReceiptEvent('org_b', 'vendor', 'evt-inbound', null, at)).toBe(false);
  });
});
